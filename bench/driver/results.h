// What one benchmark point measured, the numbers derived from it, medians over repetitions, and
// the targets judged on them. Pure: no I/O, no clock.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bench/driver/options.h"
#include "bench/driver/sampler.h"

namespace pinpoint::bench {

// One copy of the workload. Times are Unix epoch seconds (CLOCK_REALTIME in every process);
// 0 when unknown.
struct JobResult {
  double submit_call_s = 0;  // the driver sent its submit (direct modes: 0, no submission)
  double submit_s = 0;       // pinpointd received it, submit_ms (direct modes: started)
  double start_s = 0;        // its process started: start_ms (direct modes: spawned)
  double first_cuda_s = 0;   // its first CUDA call, from its pp-cuda line
  double ready_s = 0;        // its CUDA context existed, from the same line
  double end_s = 0;          // its end was seen: end_ms (direct modes: reaped)
  double known_s = 0;        // the driver learnt of its end (the wait reply; direct: reaped)
  bool ok = false;           // exited with 0 and printed a pp-work line
  double units = 0;          // work done, from the pp-work line
  std::string unit;
  double own_seconds = 0;  // the copy's own account of its time
  std::string device;      // UUID it ran on, when known
  std::string detail;      // why it is not ok
};

// N copies run together (or queued by pinpointd): the window from just before the first
// submission or start to just after the last end was seen.
struct BatchResult {
  double t0_s = 0;
  double t1_s = 0;
  std::vector<JobResult> jobs;
};

struct PointResult {
  Mode mode = Mode::kBare;
  int n = 0;
  int rep = 0;           // 1-based
  bool skipped = false;  // not run (time budget)
  std::string error;     // the batch could not be run at all (e.g. a submit failed)
  BatchResult batch;
  WindowStats gpu;
};

// Numbers of one point. Values below 0 are unknown.
struct PointMetrics {
  int ok_jobs = 0;
  int failed_jobs = 0;
  double makespan_s = -1;        // t1 - t0
  double units = 0;              // work of the jobs that ended ok
  double throughput = -1;        // units / makespan_s
  double jobs_per_min = -1;      // ok jobs / makespan, per minute
  double job_mean_s = -1;        // mean run time (end - start) of the ok jobs
  double job_p95_s = -1;         // 95th percentile of the same (nearest rank)
  double wait_mean_s = -1;       // mean time from submission to start (queueing in pinpointd)
  double energy_per_job_j = -1;  // the GPU's energy over the window / N
  double mean_power_w = -1;
  double utilization_pct = -1;
};

PointMetrics ComputeMetrics(const PointResult& point);

// Medians over the repetitions of one (mode, N) that ran.
struct SummaryRow {
  Mode mode = Mode::kBare;
  int n = 0;
  int reps = 0;         // repetitions measured (not skipped, no error)
  int failed_jobs = 0;  // over all repetitions
  std::string unit;
  PointMetrics median;
  double vs_exclusive = -1;  // throughput / exclusive's at the same N
};

// One row per (mode, N) that has at least one measured repetition, in `modes` order, then N.
std::vector<SummaryRow> Summarize(const std::vector<PointResult>& points,
                                  const std::vector<Mode>& modes);

// The points of each (mode, N) whose repetitions were measured (not skipped, no error), keyed by
// (the mode's place in `modes`, N): so in `modes` order, then N.
std::map<std::pair<int, int>, std::vector<const PointResult*>> MeasuredPointsByModeAndN(
    const std::vector<PointResult>& points, const std::vector<Mode>& modes);

double Median(std::vector<double> values);                  // -1 for none
double Percentile(std::vector<double> values, double pct);  // nearest rank; -1 for none

// A target of issue 5, judged on the summary.
struct TargetResult {
  std::string name;    // e.g. "mps throughput >= 5x exclusive (N=16)"
  bool known = false;  // both sides were measured
  bool met = false;
  bool info = false;     // shown for context, not one of the targets
  double value = 0;      // the measured ratio or overhead
  std::string measured;  // value for people: "12.3x", "97%", "+1.2%"
  std::string detail;    // the two numbers it comes from
};

// The targets: at target_n, mps >= 5x exclusive's throughput and >= 90% of bare-mps's;
// energy per job in exclusive >= 4x mps's; at N=1, exclusive's makespan within 3% of bare's
// (and, as information, mps's against bare-mps's).
std::vector<TargetResult> EvaluateTargets(const std::vector<SummaryRow>& rows, int target_n);

}  // namespace pinpoint::bench
