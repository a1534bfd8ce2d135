// Right-sizing: what a job used against what it asked for, and the request to make next time.
// Pure: works on job records (JSON as the daemon sends them). Rules in docs/accounting.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pinpoint::cli {

struct Advice {
  bool enough_data = false;       // the watcher saw the job often enough to advise
  uint64_t suggested_gpu_mem_bytes = 0;  // per device; 0 = no suggestion
  std::string text;               // one line for people
};

// Polls a job must have been seen in before its peak is trusted.
inline constexpr int64_t kMinSamplesForAdvice = 3;

// The advice for one job record.
Advice AdviseJob(const nlohmann::json& job);
// The peak plus headroom (10% of the peak, at least 256 MiB), rounded up to 256 MiB.
uint64_t SuggestedGpuMem(uint64_t peak_bytes);

// A summary of ended jobs per user and for all of them: requested vs used device memory,
// whole-GPU hours and their utilisation, energy. `jobs`: records as "queue --all" returns them.
nlohmann::json Report(const nlohmann::json& jobs);
std::string FormatReport(const nlohmann::json& report);

}  // namespace pinpoint::cli
