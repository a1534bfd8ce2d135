// The files a benchmark run leaves in its output directory: results.json (everything, per job),
// points.csv (one row per repetition), summary.csv (medians per mode and N, read by
// bench/plot.sh), results.md (the table, the targets and where the time goes, for people; the
// last also as "breakdown" in results.json) and meta.txt (one line:
// GPU, driver, CUDA, date, used as the plots' subtitle).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/driver/options.h"
#include "bench/driver/results.h"
#include "bench/driver/workload.h"

namespace pinpoint::bench {

struct RunMeta {
  std::string gpu_name;  // "NVIDIA H100 80GB HBM3" (every GPU measured is this model)
  std::string gpu_uuid;  // the first GPU measured
  int gpu_index = 0;
  std::vector<int> gpu_indices;        // every GPU measured; empty: gpu_index alone
  std::vector<std::string> gpu_uuids;  // in the order of gpu_indices
  int sm_count = 0;
  uint64_t gpu_mem_bytes = 0;
  std::string driver;    // "580.159.04"
  std::string cuda;      // "13.0" or "unknown"
  std::string backend;   // "nvml"
  std::string date_utc;  // "2026-11-24T10:00:00Z"
  int host_cpus = 0;
  std::string pinpoint_version;
  std::string command_line;   // how pinpoint-bench was started
  std::string workload_line;  // one copy's command, for people
  bool interrupted = false;
  std::string error;  // why the campaign ended early, or ""
};

// "NVIDIA H100 80GB HBM3, driver 580.159.04, CUDA 13.0, 2026-11-24"; with two GPUs measured
// "2 x NVIDIA H200, driver ...".
std::string MetaLine(const RunMeta& meta);

nlohmann::json ResultsJson(const RunMeta& meta, const BenchOptions& options,
                           const Workload& workload, const std::vector<PointResult>& points);
std::string PointsCsv(const std::string& workload, const std::vector<PointResult>& points);
std::string SummaryCsv(const std::string& workload, const std::vector<SummaryRow>& rows);
std::string Markdown(const RunMeta& meta, const BenchOptions& options,
                     const std::vector<PointResult>& points);

// Writes all five files into `dir` (created if missing). Errors: kIo naming the file.
Status WriteResults(const std::string& dir, const RunMeta& meta, const BenchOptions& options,
                    const Workload& workload, const std::vector<PointResult>& points);

}  // namespace pinpoint::bench
