// The pinpoint command line: subcommands from one table, each a client of the public API.
#pragma once

#include <iosfwd>

namespace pinpoint::cli {

// Runs `pinpoint` with argv; writes results to `out`, the one error line to `err`.
// Returns the process exit code (see ExitCodeFor in format.h; 0 on success; for
// `submit --wait`, the job's own exit code, or 1 when it ended without one).
int RunCli(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace pinpoint::cli
