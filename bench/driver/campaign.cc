#include "bench/driver/campaign.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ostream>
#include <thread>

#include "bench/driver/proc.h"

namespace pinpoint::bench {

namespace {

std::string Clock(double seconds) {
  int s = static_cast<int>(seconds);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%dm%02ds", s / 60, s % 60);
  return buf;
}

std::string Describe(const PointResult& p) {
  char buf[512];
  if (p.skipped) return "skipped: would pass the time budget";
  if (!p.error.empty()) return "error: " + p.error;
  PointMetrics m = ComputeMetrics(p);
  std::string unit;
  for (const JobResult& j : p.batch.jobs) {
    if (j.ok) {
      unit = j.unit;
      break;
    }
  }
  std::snprintf(buf, sizeof(buf), "%d/%d ok in %.2f s, %.4g %s/s, job %.2f s", m.ok_jobs, p.n,
                m.makespan_s, m.throughput, unit.c_str(), m.job_mean_s);
  std::string line = buf;
  if (m.energy_per_job_j >= 0) {
    std::snprintf(buf, sizeof(buf), ", %.1f J/job, %.0f W", m.energy_per_job_j, m.mean_power_w);
    line += buf;
  }
  if (m.utilization_pct >= 0) {
    std::snprintf(buf, sizeof(buf), ", util %.0f%%", m.utilization_pct);
    line += buf;
  }
  for (const JobResult& j : p.batch.jobs) {
    if (!j.ok) {
      line += "\n    first failure: " + j.detail;
      break;
    }
  }
  return line;
}

}  // namespace

std::vector<PointSpec> PlanPoints(const BenchOptions& options) {
  std::vector<int> all_n;
  for (Mode m : options.modes) {
    for (int n : NValuesFor(options, m)) all_n.push_back(n);
  }
  std::sort(all_n.begin(), all_n.end());
  all_n.erase(std::unique(all_n.begin(), all_n.end()), all_n.end());
  std::vector<PointSpec> plan;
  for (int n : all_n) {
    for (Mode m : options.modes) {
      std::vector<int> ns = NValuesFor(options, m);
      if (std::find(ns.begin(), ns.end(), n) == ns.end()) continue;
      for (int rep = 1; rep <= RepsAt(options, n); ++rep) plan.push_back({m, n, rep});
    }
  }
  return plan;
}

double EstimateSeconds(Mode mode, int n, const std::vector<PointResult>& done) {
  const PointResult* best = nullptr;
  for (const PointResult& p : done) {
    if (p.mode != mode || p.skipped || !p.error.empty() || p.n > n) continue;
    if (best == nullptr || p.n >= best->n) best = &p;
  }
  if (best == nullptr || best->n <= 0) return -1;
  double seconds = best->batch.t1_s - best->batch.t0_s;
  double scale = static_cast<double>(n) / best->n;
  bool overlapping = mode == Mode::kMps || mode == Mode::kBareMps;
  return overlapping ? seconds * std::max(1.0, scale / 2) : seconds * scale;
}

namespace {

// One run of RunCampaign: the runners' setup and warm-up, the plan, the teardown.
class CampaignRun {
 public:
  CampaignRun(const BenchOptions& options, const std::map<Mode, BatchRunner*>& runners,
              EnergyMeter* meter, const std::string& workload_name, const CampaignHooks& hooks,
              std::ostream& progress, const std::atomic<bool>* stop)
      : options_(options),
        runners_(runners),
        meter_(meter),
        workload_(workload_name),
        hooks_(hooks),
        progress_(progress),
        stop_(stop) {
    if (!hooks_.now) hooks_.now = [] { return NowSeconds(); };
    if (!hooks_.sleep) {
      hooks_.sleep = [](int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
    }
  }

  Status Run(std::vector<PointResult>* points) {
    start_ = hooks_.now();
    SetUp();
    if (options_.warmup) WarmUp();
    if (dropped_.size() < options_.modes.size()) RunPlan(points);
    for (auto it = started_.rbegin(); it != started_.rend(); ++it) (*it)->Teardown();
    if (dropped_.empty()) return Status::Ok();
    std::string more = dropped_.size() == 1
                           ? ""
                           : " (and " + std::to_string(dropped_.size() - 1) + " more mode" +
                                 (dropped_.size() > 2 ? "s" : "") + ")";
    return FailedPrecondition(first_drop_ + more);
  }

 private:
  bool Stopped() const { return stop_ != nullptr && stop_->load(); }

  // A mode whose setup or warm-up copy fails is dropped, with the reason, and the others go on:
  // one run on a lent GPU should bring back all it can.
  void Drop(Mode m, const std::string& why) {
    dropped_[m] = why;
    if (first_drop_.empty()) first_drop_ = why;
    progress_ << why << " (mode dropped)" << std::endl;
  }

  void SetUp() {
    for (Mode m : options_.modes) {
      BatchRunner* r = runners_.at(m);
      started_.push_back(r);
      Status s = r->Setup();
      if (!s.ok()) {
        Drop(m, std::string("setup ") + ModeName(m) + ": " + s.message());
        continue;
      }
      progress_ << "setup " << ModeName(m) << ": ready"
                << (r->Note().empty() ? "" : " (" + r->Note() + ")") << std::endl;
    }
  }

  void WarmUp() {
    for (Mode m : options_.modes) {
      if (Stopped()) break;
      if (dropped_.count(m)) continue;
      Result<BatchResult> b = runners_.at(m)->Run(1, workload_ + "-" + ModeName(m) + "-warmup");
      if (!b.ok()) {
        Drop(m, std::string("warm-up in mode ") + ModeName(m) + ": " + b.status().message());
      } else if (b->jobs.empty() || !b->jobs[0].ok) {
        Drop(m, std::string("warm-up copy in mode ") + ModeName(m) +
                    " failed: " + (b->jobs.empty() ? "no job" : b->jobs[0].detail));
      } else {
        char buf[128];
        std::snprintf(buf, sizeof(buf), "warm-up %s: one copy in %.2f s", ModeName(m),
                      b->t1_s - b->t0_s);
        progress_ << buf << std::endl;
      }
    }
  }

  void RunPlan(std::vector<PointResult>* points) {
    std::vector<PointSpec> plan = PlanPoints(options_);
    for (size_t i = 0; i < plan.size() && !Stopped(); ++i) {
      const PointSpec& spec = plan[i];
      PointResult p;
      p.mode = spec.mode;
      p.n = spec.n;
      p.rep = spec.rep;
      if (dropped_.count(spec.mode)) {
        p.error = dropped_[spec.mode];
        points->push_back(p);
        continue;
      }
      double estimate = EstimateSeconds(spec.mode, spec.n, *points);
      double end = hooks_.now() - start_ + estimate + options_.settle_ms / 1000.0;
      if (options_.budget_s > 0 && estimate > 0 && end > options_.budget_s) {
        p.skipped = true;
      } else if (!Measure(spec, &p)) {
        break;  // interrupted
      }
      points->push_back(p);
      if (hooks_.on_point) hooks_.on_point(*points);
      char head[96];
      std::snprintf(head, sizeof(head), "[%3zu/%zu %s] %-9s N=%-3d rep %d/%d: ", i + 1, plan.size(),
                    Clock(hooks_.now() - start_).c_str(), ModeName(spec.mode), spec.n, spec.rep,
                    RepsAt(options_, spec.n));
      progress_ << head << Describe(p) << std::endl;
    }
    if (Stopped()) progress_ << "interrupted: stopping" << std::endl;
  }

  // Runs one point between two marks of the meter. False when it was interrupted.
  bool Measure(const PointSpec& spec, PointResult* p) {
    hooks_.sleep(options_.settle_ms);
    std::string tag = workload_ + "-" + ModeName(spec.mode) + "-n" + std::to_string(spec.n) + "-r" +
                      std::to_string(spec.rep);
    double m0 = meter_->Mark();
    Result<BatchResult> b = runners_.at(spec.mode)->Run(spec.n, tag);
    double m1 = meter_->Mark();
    if (!b.ok() && Stopped()) return false;
    if (!b.ok()) {
      p->error = b.status().message();
    } else {
      p->batch = std::move(b).value();
      p->gpu = meter_->Window(m0, m1);
    }
    return true;
  }

  const BenchOptions& options_;
  const std::map<Mode, BatchRunner*>& runners_;
  EnergyMeter* meter_;
  std::string workload_;
  CampaignHooks hooks_;
  std::ostream& progress_;
  const std::atomic<bool>* stop_;
  double start_ = 0;
  std::map<Mode, std::string> dropped_;
  std::string first_drop_;
  std::vector<BatchRunner*> started_;
};

}  // namespace

Status RunCampaign(const BenchOptions& options, const std::map<Mode, BatchRunner*>& runners,
                   EnergyMeter* meter, const std::string& workload_name, const CampaignHooks& hooks,
                   std::ostream& progress, const std::atomic<bool>* stop,
                   std::vector<PointResult>* points) {
  return CampaignRun(options, runners, meter, workload_name, hooks, progress, stop).Run(points);
}

}  // namespace pinpoint::bench
