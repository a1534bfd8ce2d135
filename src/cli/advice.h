// Right-sizing: what a job used against what it asked for, and the request to make next time.
// Pure: works on jobs as replies carry them. Rules in docs/accounting.md.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "pinpoint/api.h"

namespace pinpoint::cli {

struct Advice {
  bool enough_data = false;              // the watcher saw the job often enough to advise
  uint64_t suggested_gpu_mem_bytes = 0;  // per device; 0 = no suggestion
  std::string text;                      // one line for people
};

// Polls a job must have been seen in before its peak is trusted.
inline constexpr int64_t kMinSamplesForAdvice = 3;

// The advice for one job.
Advice AdviseJob(const JobView& job);
// The peak plus headroom (10% of the peak, at least 256 MiB), rounded up to 256 MiB.
uint64_t SuggestedGpuMem(uint64_t peak_bytes);

// Ended jobs of one user (or of all): requested vs used device memory, whole-GPU hours and their
// utilisation, energy.
struct ReportRow {
  std::string user;
  int64_t jobs = 0;
  int64_t slice_jobs = 0;
  double asked_gib_hours = 0;  // slices: device memory asked x devices x hours
  double peak_gib_hours = 0;   // slices: peak x devices x hours (jobs with usage only)
  double whole_gpu_hours = 0;
  double whole_util_gpu_hours = 0;  // whole-GPU hours weighted by utilisation (where known)
  double whole_known_hours = 0;     // whole-GPU hours whose utilisation is known
  double energy_kj = 0;
  int64_t gpu_mem_exceeded = 0;
  // The verdicts of the jobs' enforcement lists (docs/enforcement.md): verdict -> entries.
  std::map<std::string, int64_t> verdicts;
  // Of the slices' memory-hours, the part not used; nullopt without slice data.
  std::optional<double> UnusedMemPct() const;
  // Mean utilisation over the whole-GPU hours where it is known; nullopt without any.
  std::optional<double> WholeGpuUtilPct() const;
};
struct UsageReport {
  std::vector<ReportRow> users;  // by user name
  ReportRow total;               // user "(all)"
};

// The report over `jobs` (as "queue --all" returns them); jobs that have not ended are skipped.
UsageReport Report(const std::vector<JobView>& jobs);
// The report's --json form.
nlohmann::json ToJson(const UsageReport& report);
std::string FormatReport(const UsageReport& report);

}  // namespace pinpoint::cli
