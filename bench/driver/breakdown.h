// "Where the time goes": the stages of a copy's life from its submission to the driver learning
// of its end, and the parts of a batch's makespan that are not the copies' own work, per mode and
// N. Pure: no I/O, no clock.
//
// Every time is CLOCK_REALTIME: the driver's, pinpointd's stamps (whole milliseconds: a stage
// between a driver time and a daemon time is good to about 1 ms) and the copies' pp-cuda line.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/driver/options.h"
#include "bench/driver/results.h"

namespace pinpoint::bench {

// One stage over the copies (or batches) that have both of its ends: median and max in ms;
// count 0 (and the values -1) when none has.
struct StageStats {
  double median_ms = -1;
  double max_ms = -1;
  int count = 0;
};

// The stages of one (mode, N), over its measured repetitions (skipped ones and ones that could
// not run are left out) and, for a copy's stages, over the copies that ended well.
struct BreakdownRow {
  Mode mode = Mode::kBare;
  int n = 0;
  int reps = 0;
  int jobs = 0;  // copies that ended well, in all repetitions
  // A copy's stages. Through pinpoint: submit_call -> submit_ms -> start_ms -> first CUDA call ->
  // context ready, ... end_ms -> known. Direct modes: spawned -> first CUDA call -> ready only.
  StageStats submit_to_received;
  StageStats received_to_started;
  StageStats started_to_first_cuda;
  StageStats first_cuda_to_ready;
  StageStats end_to_known;
  // A batch's: from just before its first submission (t0) to the last copy received (pinpoint
  // modes) and started, and from the last end to when the driver knew of every end (t1); and
  // the whole makespan, t1 - t0.
  StageStats first_submit_to_last_received;
  StageStats first_submit_to_last_start;
  StageStats last_end_to_all_known;
  StageStats makespan;
};

// Rows in `modes` order, then N ascending; a (mode, N) with no measured repetition has none.
std::vector<BreakdownRow> ComputeBreakdown(const std::vector<PointResult>& points,
                                           const std::vector<Mode>& modes);

// The markdown section (a heading, a paragraph, the table): cells "median / max" in ms, empty
// where a stage does not apply or no copy reported it.
std::string BreakdownMarkdown(const std::vector<BreakdownRow>& rows);

// The rows for results.json: {"mode", "n", "reps", "jobs", "stages": {"submit_to_received_ms":
// {"median", "max", "count"}, ...}}, null where unknown.
nlohmann::json BreakdownJson(const std::vector<BreakdownRow>& rows);

}  // namespace pinpoint::bench
