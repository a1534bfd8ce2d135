// What `pinpoint bench` (the pinpoint-bench binary) is asked to do: its command line, parsed.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pinpoint/status.h"

namespace pinpoint::bench {

// How N copies of a workload run.
enum class Mode {
  kExclusive,  // through pinpointd, device mode exclusive: one job on the GPU at a time
  kTimeslice,  // through pinpointd, device mode timeslice: N at once, no MPS
  kMps,        // through pinpointd, device mode mps: N at once as MPS clients
  kBareMps,    // started directly under an MPS control daemon of the driver's own: no pinpoint
  kBare,       // started directly, no MPS, no pinpoint (a single copy: the baseline of one job)
};

const char* ModeName(Mode mode);  // "exclusive", "timeslice", "mps", "bare-mps", "bare"
std::optional<Mode> ModeFromName(const std::string& name);
bool ThroughPinpoint(Mode mode);      // exclusive, timeslice, mps
const std::vector<Mode>& AllModes();  // in the order above

struct BenchOptions {
  std::string workload = "busy";           // busy | mlp | torch | cmd
  std::vector<std::string> workload_args;  // after "--": extra arguments (cmd: the command)
  std::vector<int> n = {1, 2, 4, 8, 16};   // copies at once, ascending
  std::map<Mode, std::vector<int>> n_for;  // --n-for MODE=LIST overrides
  std::vector<Mode> modes = AllModes();
  int reps = 3;
  int reps_at_1 = 0;    // repetitions of the N=1 points when more than `reps` (the 3% check)
  bool warmup = true;   // one untimed copy per mode before the first measurement
  std::string out_dir;  // empty: pinpoint-bench-<workload> in the working directory
  std::string bin_dir;  // empty: the directory of the pinpoint-bench executable
  // NVML indexes of the GPUs measured (--gpu 0 or --gpu 0,1), ascending. Under pinpoint the copies
  // of a batch are submitted with no device named, so pinpointd places them (what a site gets),
  // unless `pin` or pinpointd also has GPUs not measured: then copy i goes to gpus[i % size]. The
  // bare modes (no pinpointd) always split the copies so, evenly over the GPUs.
  std::vector<int> gpus = {0};
  bool pin = false;              // --pin: copy i on gpus[i % size] under pinpoint too
  std::string backend = "nvml";  // GPU backend spec for the sampler and pinpointd
  std::string mps_control = "nvidia-cuda-mps-control";
  uint64_t gpu_mem_bytes = 0;    // slice size of every job; 0: the workload's default
  int gpu_share_pct = 0;         // 0: no SM share
  int cpus = 1;                  // host CPUs of every job under pinpoint
  bool cgroups = true;           // pinpointd applies the host limits through cgroup v2
  double budget_s = 0;           // skip points that would end past this; 0: no limit
  int target_n = 16;             // the N the targets are judged at
  int sample_ms = 100;           // GPU sampling period
  int settle_ms = 200;           // idle time before each measurement
  std::string scratch = "/tmp";  // where the short-lived state (sockets, MPS pipes) goes
  bool keep_scratch = false;
  std::string torch_script;  // empty: bench/workloads/train.py, else <bin_dir>/train.py
  std::string python = "python3";
  std::string cuda_version;             // empty: read from nvidia-smi
  std::vector<std::string> daemon_set;  // --daemon-set KEY=VALUE: more pinpointd settings
};

// Parses the arguments after the program name. When --help is asked for, returns ok and sets
// *help to the usage text (which names the command `pinpoint bench`); *help stays empty
// otherwise. Errors: kInvalidArgument with one line for a person.
Result<BenchOptions> ParseBenchArgs(const std::vector<std::string>& args, std::string* help);

// "1,2,4": positive integers, returned sorted and without duplicates. Errors: kInvalidArgument.
Result<std::vector<int>> ParseIntList(const std::string& text);
// "0,1": GPU indexes (0 to kMaxBenchGpus-1), returned sorted; one named twice is an error.
// Errors: kInvalidArgument.
inline constexpr int kMaxBenchGpus = 64;
Result<std::vector<int>> ParseIndexList(const std::string& text);
// "mps,bare-mps". Errors: kInvalidArgument naming an unknown mode.
Result<std::vector<Mode>> ParseModes(const std::string& text);

// Repetitions of a point at N: options.reps, or reps_at_1 at N=1 when that is more.
int RepsAt(const BenchOptions& options, int n);

// The N values a mode runs at: --n-for if given, else --n; bare runs at N=1 only (if --n has 1).
std::vector<int> NValuesFor(const BenchOptions& options, Mode mode);

}  // namespace pinpoint::bench
