// The campaign: which points run in which order (the plan, pure), the time each is expected to
// take, and running them through the runners while the GPU is sampled.
#pragma once

#include <atomic>
#include <functional>
#include <iosfwd>
#include <map>
#include <vector>

#include "bench/driver/options.h"
#include "bench/driver/results.h"
#include "bench/driver/runner.h"
#include "bench/driver/sampler.h"

namespace pinpoint::bench {

struct PointSpec {
  Mode mode = Mode::kBare;
  int n = 0;
  int rep = 0;  // 1-based
};

// Every (mode, N, repetition) to run: N ascending; for each N the modes in options.modes order;
// for each mode its repetitions. So the small N of every mode come first, and a time budget that
// runs out costs the largest N, not a whole mode.
std::vector<PointSpec> PlanPoints(const BenchOptions& options);

// Seconds a point of `mode` at `n` is expected to take, from the points of the same mode already
// measured (the one with the largest N at or below n): linear in N for exclusive, timeslice and
// bare, which run the copies' GPU work one after another; half as steep for mps and bare-mps,
// whose copies overlap. -1 when nothing of that mode was measured yet.
double EstimateSeconds(Mode mode, int n, const std::vector<PointResult>& done);

struct CampaignHooks {
  // After each point, with everything so far (to write results as they come).
  std::function<void(const std::vector<PointResult>&)> on_point;
  // Sleeps before a measurement (tests pass a no-op).
  std::function<void(int ms)> sleep;
  std::function<double()> now;  // seconds; for the budget and the progress lines
};

// Sets up every runner, runs one untimed copy per mode (options.warmup), then the plan, and tears
// the runners down (always). Progress lines go to `progress`. Points past options.budget_s are
// recorded as skipped. Stops early, with the points so far, when *stop turns true.
// A mode whose Setup fails or whose warm-up copy fails is dropped: its points are recorded with
// that error and the other modes run. Errors: kFailedPrecondition naming the first dropped mode's
// reason (the points of the others are in *points all the same).
Status RunCampaign(const BenchOptions& options, const std::map<Mode, BatchRunner*>& runners,
                   EnergyMeter* meter, const std::string& workload_name, const CampaignHooks& hooks,
                   std::ostream& progress, const std::atomic<bool>* stop,
                   std::vector<PointResult>* points);

}  // namespace pinpoint::bench
