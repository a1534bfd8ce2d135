// The workloads pinpoint-bench runs, and the one line each prints about the work it did.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/driver/options.h"
#include "pinpoint/status.h"

namespace pinpoint::bench {

struct Workload {
  std::string name;               // busy | mlp | torch | cmd
  std::vector<std::string> argv;  // one copy's command; argv[0] absolute or found in PATH
  uint64_t gpu_mem_bytes = 0;     // the slice each copy asks pinpoint for
};

// The command of one copy: pp-busy or pp-mlp from bin_dir, python + the torch script, or the
// command after "--" (cmd). Arguments after "--" are appended (pp-busy gets
// "--blocks 4 --iters 500000000" when there are none). A relative torch script is taken from
// `cwd`. Errors: kNotFound naming a missing program or script (pp-mlp is only built where nvcc
// is), kInvalidArgument for an unknown workload.
Result<Workload> MakeWorkload(const BenchOptions& options, const std::string& bin_dir,
                              const std::string& cwd);

// What a copy reports as its last word: "pp-work units=<x> unit=<name> seconds=<t>".
struct WorkReport {
  double units = 0;
  std::string unit;
  double seconds = 0;  // the copy's own time from its start (for people; not used for throughput)
};

// The last line of `output` that starts with "pp-work " and parses; nullopt when there is none.
std::optional<WorkReport> ParseWorkLine(const std::string& output);

}  // namespace pinpoint::bench
