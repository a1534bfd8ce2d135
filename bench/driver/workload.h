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

// When a copy's CUDA started, as pp-busy prints it near the top of its output:
// "pp-cuda first_us=<CLOCK_REALTIME us just before its first CUDA call> ready_us=<once its
// context exists>". Epoch seconds, like every time of the driver.
struct CudaStart {
  double first_s = 0;
  double ready_s = 0;
};

// The first line of `output` that starts with "pp-cuda " and has both positive fields; nullopt
// when there is none (workloads that do not print it).
std::optional<CudaStart> ParseCudaLine(const std::string& output);

// How much of a copy's output the driver reads to find its pp-cuda line (from the start) and its
// pp-work line (from the end).
inline constexpr uint64_t kOutputHeadBytes = 64 * 1024;
inline constexpr uint64_t kOutputTailBytes = 256 * 1024;

}  // namespace pinpoint::bench
