// Test helper for bench/driver: points built by hand, for the results and report tests.
#pragma once

#include <string>

#include "bench/driver/results.h"

namespace pinpoint::bench {

// A measured point of n copies, each running `run_s` after waiting `wait_s` and doing `units` of
// work (the first `failed` of them not ok), in a window of makespan_s with energy_j used.
inline PointResult TestPoint(Mode mode, int n, double makespan_s, double run_s, double energy_j,
                             double units = 1, int failed = 0, double wait_s = 0,
                             const std::string& unit = "Giter") {
  PointResult p;
  p.mode = mode;
  p.n = n;
  p.rep = 1;
  p.batch.t0_s = 1000;
  p.batch.t1_s = 1000 + makespan_s;
  for (int i = 0; i < n; ++i) {
    JobResult j;
    j.submit_s = 1000;
    j.start_s = 1000 + wait_s;
    j.end_s = j.start_s + run_s;
    j.ok = i >= failed;
    j.units = units;
    j.unit = unit;
    p.batch.jobs.push_back(j);
  }
  p.gpu.seconds = makespan_s;
  p.gpu.energy_j = energy_j;
  p.gpu.mean_power_w = energy_j / makespan_s;
  p.gpu.utilization_pct = 50;
  return p;
}

}  // namespace pinpoint::bench
