// pinpoint-bench's whole program (what `pinpoint bench` runs), as a function for the thin main.
#pragma once

#include <iosfwd>

namespace pinpoint::bench {

// Parses argv, checks that a GPU is there (NVML), starts the runners and the sampler, runs the
// campaign and writes the results. Progress goes to `out`, the one error line to `err`.
// Returns 0 when every point ran, 1 when the campaign could not run or stopped on an error
// (whatever was measured is written), 2 for bad usage, 130 when interrupted (SIGINT/SIGTERM).
int RunBenchCli(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace pinpoint::bench
