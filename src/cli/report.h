// `pinpoint report` (docs/accounting.md): the ended jobs of a time range, summed per user and GPU
// hour, as text, --json, or --csv (one row per user, or with --jobs per job).
#pragma once

#include <ostream>
#include <string>

#include "pinpoint/status.h"

namespace pinpoint::cli {

struct ReportArgs {
  std::string since, until;
  bool csv = false;
  bool jobs = false;
};

// Asks the daemon at `socket` for the ended jobs (1000 a page, filtered by end time there; at
// most `limit`, 10000 when 0; of `user` when not empty) and prints the report. Errors:
// kInvalidArgument for options that do not go together or a time it cannot read; the client's.
Result<int> RunReport(const std::string& socket, bool json_output, const ReportArgs& a,
                      const std::string& user, int limit, std::ostream& out);

}  // namespace pinpoint::cli
