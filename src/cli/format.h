// Pure formatting of daemon replies for people. No I/O.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "pinpoint/status.h"

namespace pinpoint::cli {

// "2 GPU x 4GiB 20%", "1 GPU (whole)", "-" for the resource column of a job.
std::string FormatGpuRequest(const nlohmann::json& request);
// The queue table: one header line and one line per job.
std::string FormatQueue(const nlohmann::json& reply, int64_t now_ms);
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
