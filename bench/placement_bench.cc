// Where slices go, simulated: slice_placement spread, pack and auto on one trace of small slices
// and whole-GPU jobs arriving over time, on nodes of 2, 4 and 8 GPUs; then several users' arrays
// where MPS serves one user per GPU (UsersSection). Each pass is the real sched::Schedule; only
// the GPUs are modelled. Reports makespan and mean waits per policy.
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
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sched/placement.h"
#include "sched/preemption.h"

namespace {

using namespace pinpoint::sched;  // NOLINT(google-build-using-namespace)

constexpr uint64_t kGiB = uint64_t{1} << 30;

struct TraceJob {
  JobId id = 0;
  double arrive_s = 0;
  uint32_t uid = 0;
  int gpus = 1;
  uint64_t gpu_mem_bytes = 0;     // 0: whole GPUs
  double compute = 1;             // share of a GPU's SMs it uses alone
  double work_s = 0;              // run time alone
  std::vector<int> devices = {};  // pinned (the per-user split): a batch system chose them
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
  std::map<uint32_t, double> user_end_s;   // each user's last end, from their first arrival
  std::map<uint32_t, double> user_wait_s;  // each user's mean wait
  double makespan_s = 0;
  double turnaround_s = 0;  // mean of end - arrival
  double wait_all_s = 0;
  double wait_whole_s = 0;
  double wait_whole_warm_s = 0;  // of those arriving after the first kWarmS seconds
  double wait_slice_s = 0;
  std::map<uint32_t, double> user_min_wait_s;  // each user's shortest and longest wait
  std::map<uint32_t, double> user_max_wait_s;
  int preempted = 0;       // runs requeued by the fair share's reclaim
  double lost_work_s = 0;  // the work those runs had done, lost (seconds alone)
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

// `reclaim_s` > 0: the fair share's reclaim as pinpointd makes it (Node::ReclaimFor,
// docs/scheduling.md "Several users and MPS"), every job's class letting it be requeued with no
// grace: a slice waiting that long since it arrived (or was requeued), of a user below their
// share, has the jobs of one GPU of a user above theirs requeued (sched::ReclaimCandidates, then
// PickVictims), their work done lost; one GPU per user a pass.
Outcome Simulate(const std::vector<TraceJob>& trace, int gpus, SlicePlacement placement,
                 int keep_empty, int64_t affinity_ms = 0, double reclaim_s = 0) {
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
  inv.mps_affinity_ms = affinity_ms;
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
  std::map<uint32_t, double> first_arrival;
  std::map<uint32_t, int> user_jobs;
  for (const TraceJob& j : trace) {
    auto [it, added] = first_arrival.emplace(j.uid, j.arrive_s);
    if (!added) it->second = std::min(it->second, j.arrive_s);
    ++user_jobs[j.uid];
  }
  auto ms = [](double s) { return static_cast<int64_t>(std::llround(s * 1000)) + 1; };  // never 0
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
  std::map<const TraceJob*, double> waiting_since;
  while (next < order.size() || !pending.empty() || !running.empty()) {
    while (next < order.size() && order[next]->arrive_s <= now + 1e-9) {
      waiting_since[order[next]] = order[next]->arrive_s;
      pending.push_back(order[next++]);
    }
    Snapshot snap;
    snap.inventory = inv;
    for (int i = 0; i < gpus; ++i)
      snap.inventory.devices[i].busy_pct = std::min(100, int(100 * load(i)));
    snap.now_ms = ms(now);
    for (const Live& l : running)
      snap.running.push_back({l.job->id, l.job->uid, 1, 0, l.slots, 0, ms(l.start_s)});
    for (const TraceJob* j : pending) {
      Demand d;
      d.id = j->id;
      d.uid = j->uid;
      d.gpus = j->gpus;
      d.gpu_mem_bytes = j->gpu_mem_bytes;
      d.devices = j->devices;
      snap.pending.push_back(d);
    }
    Plan plan = Schedule(snap);
    for (const Start& s : plan.starts) {
      const TraceJob* j = by_id.at(s.id);
      running.push_back({j, s.slots, j->work_s, now});
      double wait = now - waiting_since[j];
      out.wait_all_s += wait;
      out.user_wait_s[j->uid] += wait / user_jobs[j->uid];
      auto [low, first] = out.user_min_wait_s.emplace(j->uid, wait);
      if (!first) low->second = std::min(low->second, wait);
      out.user_max_wait_s[j->uid] = std::max(out.user_max_wait_s[j->uid], wait);
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
    double step =
        next < order.size() ? order[next]->arrive_s - now : std::numeric_limits<double>::infinity();
    if (reclaim_s > 0) {
      Snapshot after;  // the node once this pass's starts are made
      after.inventory = snap.inventory;
      after.now_ms = snap.now_ms;
      for (const Live& l : running)
        after.running.push_back({l.job->id, l.job->uid, 1, 0, l.slots, 0, ms(l.start_s)});
      for (const Demand& d : snap.pending)
        if (std::any_of(pending.begin(), pending.end(),
                        [&](const TraceJob* j) { return j->id == d.id; }))
          after.pending.push_back(d);
      std::set<uint32_t> served;
      std::vector<const TraceJob*> waiting = pending;
      for (const TraceJob* j : waiting) {
        if (j->gpus != 1 || j->gpu_mem_bytes == 0 || served.count(j->uid)) continue;
        double due = waiting_since[j] + reclaim_s;
        if (now + 1e-9 < due) {
          step = std::min(step, due - now);
          continue;
        }
        const Demand& d = *std::find_if(after.pending.begin(), after.pending.end(),
                                        [&](const Demand& x) { return x.id == j->id; });
        std::vector<JobId> victims =
            PickVictims(after, d, ReclaimCandidates(after, d, [](JobId) { return true; }));
        if (victims.empty()) continue;
        served.insert(j->uid);
        for (JobId v : victims) {
          auto live = std::find_if(running.begin(), running.end(),
                                   [&](const Live& l) { return l.job->id == v; });
          out.lost_work_s += live->job->work_s - live->left_s;
          ++out.preempted;
          waiting_since[live->job] = now;
          pending.push_back(live->job);
          running.erase(live);
          std::erase_if(after.running, [&](const RunningJob& r) { return r.id == v; });
        }
        step = std::min(step, 0.001);  // the pass that places it on the GPU made for it
      }
    }
    // A slice waiting for its user's affinity window: the next pass when it closes.
    if (plan.recheck_at_ms)
      step = std::min(step, std::max(0.001, (*plan.recheck_at_ms - snap.now_ms) / 1000.0));
    std::vector<double> speeds;
    for (const Live& l : running) {
      speeds.push_back(speed(l));
      step = std::min(step, l.left_s / speeds.back());
    }
    if (!std::isfinite(step)) break;  // nothing runs or arrives: what waits never starts
    now += step;
    for (size_t i = 0; i < running.size(); ++i) running[i].left_s -= step * speeds[i];
    for (const Live& l : running)
      if (l.left_s <= 1e-6) {
        out.turnaround_s += now - l.job->arrive_s;
        double& end = out.user_end_s[l.job->uid];
        end = std::max(end, now - first_arrival[l.job->uid]);
      }
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

// Several users, each with arrays of small trainings, where MPS serves one user per GPU.
// `burst`: each user submits one array of 4G tasks (3 GiB, 15% of a GPU's SMs alone, 25 s alone),
// user k 0.3 k s after the first (issue 44's case on two GPUs: 8 trainings each). `steady`: ten
// rounds 90 s apart; in each, every user submits an array of G to 4G tasks (10-30% of the SMs, 20
// to 60 s alone) 0 to 3 s into the round. With `split` each user's tasks are pinned to GPUs of
// their own (users over GPUs share them in turn): the per-user split a batch system makes.
std::vector<TraceJob> UsersTrace(int gpus, int users, bool steady, bool split, uint32_t seed) {
  Rng rng(seed);
  std::vector<TraceJob> jobs;
  JobId id = 1;
  auto own = [&](int user) {
    std::vector<int> set;
    if (users <= gpus) {
      for (int g = user * (gpus / users); g < (user + 1) * (gpus / users); ++g) set.push_back(g);
    } else {
      set.push_back(user % gpus);
    }
    return set;
  };
  for (int round = 0; round < (steady ? 10 : 1); ++round) {
    for (int u = 0; u < users; ++u) {
      double at = steady ? round * 90.0 + rng.Pick(0, 30) / 10.0 : 0.3 * u;
      int tasks = steady ? rng.Pick(gpus, 4 * gpus) : 4 * gpus;
      std::vector<int> set = own(u);
      for (int t = 0; t < tasks; ++t) {
        TraceJob j{id++,
                   at,
                   1000 + static_cast<uint32_t>(u),
                   1,
                   3 * kGiB,
                   steady ? rng.Pick(10, 30) / 100.0 : 0.15,
                   steady ? double(rng.Pick(20, 60)) : 25.0};
        if (split) j.devices = {set[static_cast<size_t>(t) % set.size()]};
        jobs.push_back(j);
      }
    }
  }
  return jobs;
}

// Jain's fairness index of the users' completion times: 1 when all are equal.
double Jain(const std::map<uint32_t, double>& x) {
  double sum = 0, sq = 0;
  for (const auto& [uid, v] : x) {
    sum += v;
    sq += v * v;
  }
  return sq > 0 ? sum * sum / (static_cast<double>(x.size()) * sq) : 1;
}

void UsersSection(std::ostringstream& md) {
  constexpr uint32_t kSeeds = 5;
  md << "\n# Several users on MPS GPUs: one user per GPU at a time, simulated\n\n"
     << "MPS serves one Unix user per GPU: while user A's jobs hold a GPU, user B's slices wait "
        "for "
        "it to empty. Traces (bench/placement_bench.cc, UsersTrace): *burst*, each user submits "
        "one "
        "array of 4G small trainings (3 GiB, 15% of a GPU's SMs alone, 25 s alone), user k 0.3 k s "
        "after the first; *steady*, ten rounds 90 s apart of one array per user of G to 4G tasks "
        "(10-30% of the SMs, 20-60 s alone), 0-3 s into the round (mean of "
     << kSeeds
     << " seeds). "
        "Policies: **auto**, the default (slice_placement auto, mps_affinity_ms 500: fair shares "
        "of "
        "the empty GPUs and the affinity window), auto without the window (mps_affinity_ms 0), "
        "**spread** (the least loaded GPU, as auto did for slices before), and **split**: each "
        "user's "
        "tasks pinned to GPUs of their own, the per-user split of a batch system. Times in "
        "seconds; "
        "a user's completion is from their first arrival to their last end; fairness is Jain's "
        "index "
        "of the users' completions (1: equal); throughput is split's makespan over the "
        "policy's.\n\n"
     << "| trace | GPUs | users | policy | makespan | throughput vs split | mean user completion | "
        "mean wait | fairness |\n|---|---|---|---|---|---|---|---|---|\n";
  struct Policy {
    const char* name;
    SlicePlacement placement;
    int64_t affinity_ms;
    bool split;
  };
  const std::vector<Policy> policies = {
      {"split", SlicePlacement::kSpread, 0, true},
      {"auto (default)", SlicePlacement::kAuto, 500, false},
      {"auto, mps_affinity_ms 0", SlicePlacement::kAuto, 0, false},
      {"spread", SlicePlacement::kSpread, 0, false}};
  for (bool steady : {false, true}) {
    for (int gpus : {2, 4, 8}) {
      for (int users : {1, 2, 4, 8}) {
        if (users == 1 && steady) continue;
        double split_makespan = 0;
        for (const Policy& p : policies) {
          if (users == 1 && p.split) continue;  // one user alone: split is spread
          double makespan = 0, completion = 0, wait = 0, fairness = 0;
          for (uint32_t seed = 1; seed <= kSeeds; ++seed) {
            Outcome o = Simulate(UsersTrace(gpus, users, steady, p.split, seed), gpus, p.placement,
                                 0, p.affinity_ms);
            makespan += o.makespan_s / kSeeds;
            double c = 0, w = 0;
            for (const auto& [uid, v] : o.user_end_s)
              c += v / static_cast<double>(o.user_end_s.size());
            for (const auto& [uid, v] : o.user_wait_s)
              w += v / static_cast<double>(o.user_wait_s.size());
            completion += c / kSeeds;
            wait += w / kSeeds;
            fairness += Jain(o.user_end_s) / kSeeds;
          }
          if (p.split || (users == 1 && p.placement == SlicePlacement::kSpread))
            split_makespan = makespan;
          if (users == 1 && p.placement == SlicePlacement::kAuto && split_makespan == 0) {
            // One user alone: the reference is spread (bare MPS split evenly), computed first.
            split_makespan =
                Simulate(UsersTrace(gpus, 1, false, false, 1), gpus, SlicePlacement::kSpread, 0)
                    .makespan_s;
          }
          char line[320];
          std::snprintf(line, sizeof(line),
                        "| %s | %d | %d | %s | %.1f | %.0f%% | %.1f | %.1f | %.2f |\n",
                        steady ? "steady" : "burst", gpus, users, p.name, makespan,
                        100.0 * split_makespan / makespan, completion, wait, fairness);
          md << line;
        }
      }
    }
  }
  md << "\nWith one user, the reference (100%) is spread: bare MPS split evenly over the GPUs.\n";
}

}  // namespace

// The fair share's reclaim (issue 56): user A arrives first and fills every GPU of the node with
// long trainings; user B arrives a minute later with short ones. MPS serves one user per GPU, so
// without the reclaim B waits until one of A's GPUs empties. With it, B's slices wait at most
// about mps_reclaim_s; A pays with the work its requeued runs had done.
void ReclaimSection(std::ostringstream& md) {
  constexpr int kGpus = 8;
  std::vector<TraceJob> trace;
  JobId id = 1;
  for (int i = 0; i < 8 * kGpus; ++i) trace.push_back({id++, 0.0, 1000, 1, 8 * kGiB, 0.25, 900});
  for (int i = 0; i < 16; ++i) trace.push_back({id++, 60.0, 1001, 1, 8 * kGiB, 0.5, 120});
  md << "\n# The fair share's reclaim: a user who arrived second, simulated\n\n"
     << "On " << kGpus << " GPUs, user A submits " << 8 * kGpus
     << " trainings at 0 s (8 GiB, 25% of a GPU's SMs alone, 900 s alone) and spreads over "
        "every GPU; user B submits 16 (8 GiB, 50%, 120 s alone) at 60 s. MPS serves one user "
        "per GPU. Policy auto (mps_affinity_ms 500); the reclaim as pinpointd makes it "
        "(`mps_reclaim_s`, every job's class letting it be requeued, no grace: "
        "bench/placement_bench.cc, ReclaimSection). Times in seconds; a user's completion is "
        "from their first arrival to their last end; A's lost work is what its requeued runs "
        "had done (seconds alone).\n\n"
     << "| mps_reclaim_s | B's first start (wait) | B's mean wait | B's longest wait | B's "
        "completion | A's completion | A's runs requeued | A's lost work | makespan |\n"
     << "|---|---|---|---|---|---|---|---|---|\n";
  for (double reclaim : {0.0, 600.0, 120.0}) {
    Outcome o = Simulate(trace, kGpus, SlicePlacement::kAuto, 0, 500, reclaim);
    char row[512];
    std::snprintf(row, sizeof row, "| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %d | %.0f | %.0f |\n",
                  reclaim == 0 ? "0 (off)" : std::to_string(static_cast<int>(reclaim)).c_str(),
                  o.user_min_wait_s[1001], o.user_wait_s[1001], o.user_max_wait_s[1001],
                  o.user_end_s[1001], o.user_end_s[1000], o.preempted, o.lost_work_s, o.makespan_s);
    md << row;
  }
}

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
     << "One trace per node size: every 60 s for 20 minutes a burst of G to 3G slices (2 to 10 "
        "GiB, "
        "15-50% of a GPU's SMs alone, 1 to 3 minutes alone; two users), and a whole-GPU job of 1 "
        "or "
        "2 GPUs (2 to 6 minutes) in a third of the minutes. Each pass is the real sched::Schedule; "
        "slices on one GPU share its SMs in proportion (a GPU asked for D > 1 of its compute runs "
        "each job at 1/D). Each row is the mean over "
     << kSeeds << " traces (seeds 1 to " << kSeeds
     << "). Times in seconds: makespan from the first arrival to the last end; turnaround from a "
        "job's arrival to its end; wait from arrival to start.\n\n"
     << "| GPUs | policy | makespan | mean turnaround | mean wait | whole-GPU jobs' wait | "
        "whole-GPU jobs' wait after "
     << kWarmS / 60 << " min | slices' wait |\n"
     << "|---|---|---|---|---|---|---|---|\n";
  for (int gpus : {2, 4, 8}) {
    // The three settings at their defaults (auto keeps one GPU in eight empty: keep_empty_gpus
    // "auto"), and auto keeping none and a quarter of the GPUs.
    struct Policy {
      SlicePlacement placement;
      int keep_empty;
    };
    const int keep_default = gpus / 8;
    std::vector<Policy> policies = {{SlicePlacement::kPack, 0},
                                    {SlicePlacement::kSpread, 0},
                                    {SlicePlacement::kAuto, keep_default}};
    if (keep_default > 0) policies.push_back({SlicePlacement::kAuto, 0});
    if (gpus / 4 > keep_default) policies.push_back({SlicePlacement::kAuto, gpus / 4});
    for (const Policy& p : policies) {
      Outcome sum;
      for (uint32_t seed = 1; seed <= kSeeds; ++seed) {
        // auto at its default mps_affinity_ms (the window only changes auto).
        Outcome o = Simulate(MakeTrace(gpus, seed), gpus, p.placement, p.keep_empty,
                             p.placement == SlicePlacement::kAuto ? 500 : 0);
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
      std::snprintf(line, sizeof(line), "| %d | %s | %.0f | %.1f | %.1f | %.1f | %.1f | %.1f |\n",
                    gpus, name.c_str(), sum.makespan_s, sum.turnaround_s, sum.wait_all_s,
                    sum.wait_whole_s, sum.wait_whole_warm_s, sum.wait_slice_s);
      md << line;
    }
  }
  md << "\nkeep_empty_gpus \"auto\", the default, keeps one GPU in eight. The column after "
     << kWarmS / 60
     << " min leaves out the whole-GPU jobs that arrive while the node is cold: "
        "until the first whole-GPU job waits, auto spreads the first bursts over every GPU it does "
        "not keep (docs/scheduling.md, \"Where slices go\").\n";
  UsersSection(md);
  ReclaimSection(md);
  std::fputs(md.str().c_str(), stdout);
  if (!out_path.empty()) std::ofstream(out_path) << md.str();
  return 0;
}
