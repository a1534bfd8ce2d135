// Pure formatting of daemon replies for people. No I/O.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "pinpoint/status.h"

namespace pinpoint::cli {

// Every string from a reply that is printed for a person goes through these: user text (names,
// argv, cwd, user names, details, event texts, device names) is escaped with EscapeForTerminal,
// so it can neither forge a line nor drive the terminal. `pinpoint logs` alone prints raw bytes.
// j[key] escaped; "" when it is missing or not a string.
std::string ShownText(const nlohmann::json& j, const char* key);
// A string value escaped; a non-string is dumped as JSON (which escapes controls itself).
std::string ShownText(const nlohmann::json& value);
// argv as one line: each argument escaped, and quoted when it is empty or holds a space or quote,
// so what is shown is what ran.
std::string ShownCommand(const nlohmann::json& argv);

// "2 GPU x 4GiB 20%", "1 GPU (whole)", "-" for the resource column of a job.
std::string FormatGpuRequest(const nlohmann::json& request);
// The queue table: one header line and one line per job.
std::string FormatQueue(const nlohmann::json& reply, int64_t now_ms);
// "... N more jobs: pinpoint queue --offset K" when a queue reply's page is not the last
// (its "more" field), "" otherwise. `all` and `user` are the listing's own options.
std::string MoreJobsLine(const nlohmann::json& reply, bool all, const std::string& user);
// One job in "key: value" lines, with its events when present.
std::string FormatJob(const nlohmann::json& reply);
// The devices table with the backend line on top.
std::string FormatGpus(const nlohmann::json& reply);
// "1m05s", "3.2s", "2h01m".
std::string FormatDurationMs(int64_t ms);

// The CLI's exit code for an error: 2 bad usage or input, 3 daemon unreachable, 4 not found,
// 5 permission denied, 6 the request can never be satisfied here, 1 anything else.
int ExitCodeFor(const Status& status);

}  // namespace pinpoint::cli
