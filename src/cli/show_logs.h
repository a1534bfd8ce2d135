// `pinpoint show` and `pinpoint logs` (docs/cli.md): one job's record and its output. Both take a
// job id or an array's task as Slurm names it (job_arrays.h).
#pragma once

#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "pinpoint/status.h"

namespace pinpoint::cli {

// A reply as --json has always printed it for `logs` and `version`: with its "ok".
nlohmann::json WithOk(nlohmann::json reply);

// The record, history and advice of the jobs `shown` names; several (ARRAY_[LIST]) one after
// another, or with json_output a JSON array of them (one job: its object, as always).
// Errors: the client's, SelectJobIds's.
Result<int> RunShow(const std::string& socket, bool json_output, const std::string& shown,
                    std::ostream& out);

struct LogsArgs {
  std::string job;  // a job id, or a task as ARRAY_INDEX
  bool stderr_stream = false;
  bool follow = false;
  int tail_lines = 0;
};
// The tail, then with `follow` each new piece as the daemon sends it (it holds each request until
// the job writes or ends) until the job has ended. Errors: kInvalidArgument for a selector of
// several tasks; the client's.
Result<int> RunLogs(const std::string& socket, bool json_output, const LogsArgs& a,
                    std::ostream& out);

}  // namespace pinpoint::cli
