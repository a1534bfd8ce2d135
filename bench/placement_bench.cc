// Where slices go, simulated: slice_placement spread, pack and auto on one trace of small slices
// and whole-GPU jobs arriving over time, on nodes of 2, 4 and 8 GPUs. Each pass is the real
// sched::Schedule; only the GPUs are modelled. Reports makespan and mean waits per policy.
//
//   placement_bench [--out FILE]
//
// The model. A job alone on its GPU progresses at speed 1 and needs `work_s` seconds. A slice
// uses `compute` (0..1) of its GPU's SMs when alone; the slices on one GPU share its SMs, so when
// their computes sum to D > 1 each runs at 1/D of its speed alone (MPS without SM caps: the SMs
// are shared in proportion). A whole-GPU job uses its GPUs alone (compute 1). The watcher's
// busy_pct is min(100, 100 D) at each pass. Memory is what the scheduler checks, as on a node.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "sched/placement.h"

namespace {

using namespace pinpoint::sched;  // NOLINT(google-build-using-namespace)

constexpr uint64_t kGiB = uint64_t{1} << 30;

struct TraceJob {
  JobId id = 0;
  double arrive_s = 0;
  uint32_t uid = 0;
  int gpus = 1;
  uint64_t gpu_mem_bytes = 0;  // 0: whole GPUs
  double compute = 1;          // share of a GPU's SMs it uses alone
  double work_s = 0;           // run time alone
};

// Portable across standard libraries, unlike <random>'s distributions.
class Rng {
 public:
  explicit Rng(uint32_t seed) : engine_(seed) {}
  int Pick(int lo, int hi) { return lo + static_cast<int>(engine_() % uint32_t(hi - lo + 1)); }

 private:
  std::mt19937 engine_;
};

// Bursts of slices (arrays of small trainings, 2 users) every 60 s, and a whole-GPU job (1 or 2
// GPUs) now and then, over about 20 minutes.
std::vector<TraceJob> MakeTrace(int gpus, uint32_t seed) {
  Rng rng(seed);
  std::vector<TraceJob> jobs;
  JobId id = 1;
  for (int burst = 0; burst < 20; ++burst) {
    double t = burst * 60.0;
    int slices = rng.Pick(1, 2) * gpus;
    uint32_t uid = 1000 + static_cast<uint32_t>(rng.Pick(0, 1));
    for (int i = 0; i < slices; ++i) {
      jobs.push_back({id++, t, uid, 1, uint64_t(rng.Pick(2, 10)) * kGiB, rng.Pick(15, 50) / 100.0,
                      static_cast<double>(rng.Pick(60, 180))});
    }
    if (rng.Pick(0, 3) == 0) {
      jobs.push_back({id++, t + rng.Pick(0, 59), 2000, rng.Pick(1, 2), 0, 1.0,
                      static_cast<double>(rng.Pick(120, 360))});
    }
  }
  return jobs;
}

struct Outcome {
  double makespan_s = 0;
  double turnaround_s = 0;  // mean of end - arrival
  double wait_all_s = 0;
  double wait_whole_s = 0;
  double wait_whole_warm_s = 0;  // of those arriving after the first kWarmS seconds
  double wait_slice_s = 0;
};

// Before a node has seen a whole-GPU job, auto spreads slices over every GPU: the first whole-GPU
// jobs wait for a GPU to drain. The wait after the first minutes is the node's steady state.
constexpr double kWarmS = 300;

struct Live {
  const TraceJob* job;
  std::vector<Slot> slots;
  double left_s;  // work left, in seconds alone
  double start_s;
};

Outcome Simulate(const std::vector<TraceJob>& trace, int gpus, SlicePlacement placement, int keep_empty) {
  Inventory inv;
  for (int i = 0; i < gpus; ++i) {
    Device d;
    d.index = i;
    d.gpu_index = i;
    d.uuid = "GPU-" + std::to_string(i);
    d.mem_bytes = 80 * kGiB;
    inv.devices.push_back(d);
  }
  inv.host.cpus = 1024;
  inv.host.mem_bytes = 4096 * kGiB;
  inv.slice_placement = placement;
  inv.keep_empty_gpus = keep_empty;
  std::map<JobId, const TraceJob*> by_id;
  for (const TraceJob& j : trace) by_id[j.id] = &j;
  size_t next = 0;  // the next arrival in `order`
  std::vector<const TraceJob*> order;
  for (const TraceJob& j : trace) order.push_back(&j);
  std::stable_sort(order.begin(), order.end(),
                   [](const TraceJob* a, const TraceJob* b) { return a->arrive_s < b->arrive_s; });
  std::vector<const TraceJob*> pending;
  std::vector<Live> running;
  double now = 0;
  Outcome out;
  double wait_whole = 0, wait_whole_warm = 0, wait_slice = 0;
  int n_whole = 0, n_whole_warm = 0, n_slice = 0;
  auto load = [&](int device) {
    double d = 0;
    for (const Live& l : running)
      for (const Slot& s : l.slots)
        if (s.device_index == device) d += l.job->gpu_mem_bytes == 0 ? 1.0 : l.job->compute;
    return d;
  };
  auto speed = [&](const Live& l) {
    double v = 1;
    for (const Slot& s : l.slots) v = std::min(v, 1.0 / std::max(1.0, load(s.device_index)));
    return v;
  };
  while (next < order.size() || !pending.empty() || !running.empty()) {
    while (next < order.size() && order[next]->arrive_s <= now + 1e-9) pending.push_back(order[next++]);
    Snapshot snap;
    snap.inventory = inv;
    for (int i = 0; i < gpus; ++i) snap.inventory.devices[i].busy_pct = std::min(100, int(100 * load(i)));
    for (const Live& l : running) snap.running.push_back({l.job->id, l.job->uid, 1, 0, l.slots, 0});
    for (const TraceJob* j : pending) {
      Demand d;
      d.id = j->id;
      d.uid = j->uid;
      d.gpus = j->gpus;
      d.gpu_mem_bytes = j->gpu_mem_bytes;
      snap.pending.push_back(d);
    }
    Plan plan = Schedule(snap);
    for (const Start& s : plan.starts) {
      const TraceJob* j = by_id.at(s.id);
      running.push_back({j, s.slots, j->work_s, now});
      double wait = now - j->arrive_s;
      out.wait_all_s += wait;
      if (j->gpu_mem_bytes == 0) {
        wait_whole += wait;
        ++n_whole;
        if (j->arrive_s >= kWarmS) {
          wait_whole_warm += wait;
          ++n_whole_warm;
        }
      } else {
        wait_slice += wait;
        ++n_slice;
      }
      pending.erase(std::find(pending.begin(), pending.end(), j));
    }
    // The next event: an arrival or the first end at today's speeds.
    double step = next < order.size() ? order[next]->arrive_s - now : std::numeric_limits<double>::infinity();
    std::vector<double> speeds;
    for (const Live& l : running) {
      speeds.push_back(speed(l));
      step = std::min(step, l.left_s / speeds.back());
    }
    if (!std::isfinite(step)) break;  // nothing runs or arrives: what waits never starts
    now += step;
    for (size_t i = 0; i < running.size(); ++i) running[i].left_s -= step * speeds[i];
    for (const Live& l : running)
      if (l.left_s <= 1e-6) out.turnaround_s += now - l.job->arrive_s;
    std::erase_if(running, [](const Live& l) { return l.left_s <= 1e-6; });
  }
  out.makespan_s = now;
  out.turnaround_s /= std::max<size_t>(1, trace.size());
  out.wait_all_s /= std::max<size_t>(1, trace.size());
  out.wait_whole_s = n_whole ? wait_whole / n_whole : 0;
  out.wait_whole_warm_s = n_whole_warm ? wait_whole_warm / n_whole_warm : 0;
  out.wait_slice_s = n_slice ? wait_slice / n_slice : 0;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  constexpr uint32_t kSeeds = 10;
  std::string out_path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) {
      out_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: placement_bench [--out FILE]\n");
      return 2;
    }
  }
  std::ostringstream md;
  md << "# Where slices go: spread, pack and auto, simulated\n\n"
     << "One trace per node size: every 60 s for 20 minutes a burst of G to 3G slices (2 to 10 GiB, "
        "15-50% of a GPU's SMs alone, 1 to 3 minutes alone; two users), and a whole-GPU job of 1 or "
        "2 GPUs (2 to 6 minutes) in a third of the minutes. Each pass is the real sched::Schedule; "
        "slices on one GPU share its SMs in proportion (a GPU asked for D > 1 of its compute runs "
        "each job at 1/D). Each row is the mean over " << kSeeds << " traces (seeds 1 to " << kSeeds
     << "). Times in seconds: makespan from the first arrival to the last end; turnaround from a "
        "job's arrival to its end; wait from arrival to start.\n\n"
     << "| GPUs | policy | makespan | mean turnaround | mean wait | whole-GPU jobs' wait | "
        "whole-GPU jobs' wait after " << kWarmS / 60 << " min | slices' wait |\n"
     << "|---|---|---|---|---|---|---|---|\n";
  for (int gpus : {2, 4, 8}) {
    // The three settings at their defaults (auto keeps one GPU in eight empty: keep_empty_gpus
    // "auto"), and auto keeping none and a quarter of the GPUs.
    struct Policy {
      SlicePlacement placement;
      int keep_empty;
    };
    const int keep_default = gpus / 8;
    std::vector<Policy> policies = {{SlicePlacement::kPack, 0}, {SlicePlacement::kSpread, 0},
                                    {SlicePlacement::kAuto, keep_default}};
    if (keep_default > 0) policies.push_back({SlicePlacement::kAuto, 0});
    if (gpus / 4 > keep_default) policies.push_back({SlicePlacement::kAuto, gpus / 4});
    for (const Policy& p : policies) {
      Outcome sum;
      for (uint32_t seed = 1; seed <= kSeeds; ++seed) {
        Outcome o = Simulate(MakeTrace(gpus, seed), gpus, p.placement, p.keep_empty);
        sum.makespan_s += o.makespan_s / kSeeds;
        sum.turnaround_s += o.turnaround_s / kSeeds;
        sum.wait_all_s += o.wait_all_s / kSeeds;
        sum.wait_whole_s += o.wait_whole_s / kSeeds;
        sum.wait_whole_warm_s += o.wait_whole_warm_s / kSeeds;
        sum.wait_slice_s += o.wait_slice_s / kSeeds;
      }
      std::string name = SlicePlacementName(p.placement);
      if (p.placement == SlicePlacement::kAuto) {
        name += ", keep_empty_gpus " + std::to_string(p.keep_empty);
        if (p.keep_empty == keep_default) name += " (default)";
      }
      char line[256];
      std::snprintf(line, sizeof(line), "| %d | %s | %.0f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", gpus,
                    name.c_str(), sum.makespan_s, sum.turnaround_s, sum.wait_all_s,
                    sum.wait_whole_s, sum.wait_whole_warm_s, sum.wait_slice_s);
      md << line;
    }
  }
  md << "\nkeep_empty_gpus \"auto\", the default, keeps one GPU in eight. The column after "
     << kWarmS / 60 << " min leaves out the whole-GPU jobs that arrive while the node is cold: "
        "until the first whole-GPU job waits, auto spreads the first bursts over every GPU it does "
        "not keep (docs/scheduling.md, \"Where slices go\").\n";
  std::fputs(md.str().c_str(), stdout);
  if (!out_path.empty()) std::ofstream(out_path) << md.str();
  return 0;
}
