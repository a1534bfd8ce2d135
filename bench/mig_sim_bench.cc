// Dynamic MIG against a static MIG layout, MPS only and one job per GPU (issue 26, "Measure it"):
// one mixed trace (many small trainings, some medium, a few whole-GPU jobs, each with its
// arrival, device memory, the share of a GPU it can use and its work) on a simulated node of 8
// A100-80GB or 8 H100-80GB GPUs, run under each policy. pinpoint's own decisions: every start is
// sched::Schedule's placement, every MIG reshape sched::mig::PlanLayout's plan; the simulation only
// moves time and applies them.
//
//   mig_sim_bench [--jobs N] [--seed S] [--out FILE]
//
// The model (assumptions, said again in the report):
//   - A job that can use a fraction u of a whole GPU runs at speed min(c, u) / u on compute c.
//   - One job per GPU: c = 1. A MIG instance of g compute slices: c = g / 7, nothing shared.
//   - MPS: the jobs of one GPU share its compute, each getting at most its u (water-filling), and
//     lose kMpsInterference of their speed while more than one runs (memory bandwidth, caches).
//   - A GPU instance (with its compute instance) takes kCreateS to create and kDestroyS to destroy;
//     the GPU's other instances run on meanwhile.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "sched/mig_layout.h"
#include "sched/placement.h"

namespace {

namespace sched = pinpoint::sched;
namespace mig = pinpoint::sched::mig;

constexpr uint64_t kGB = 1'000'000'000;
constexpr int kGpus = 8;
constexpr double kTickS = 5;
constexpr double kCreateS = 4;  // GPU instance + compute instance (NVIDIA: a few seconds)
constexpr double kDestroyS = 2;
constexpr double kMpsInterference = 0.10;

struct Job {
  int id = 0;
  double arrive_s = 0;
  uint64_t mem = 0;    // device memory, bytes
  double use = 1;      // the share of a whole GPU it can use
  double work_s = 0;   // its run time alone on a whole GPU
  bool whole = false;  // asks for a whole GPU (MPS and one-per-GPU); a 7g.80gb slice under MIG
  // Filled by the simulation.
  double left_s = 0;
  double start_s = -1;
  double end_s = -1;
  int device = -1;
};

// Portable across standard libraries, unlike <random>'s distributions.
class Rng {
 public:
  explicit Rng(uint32_t seed) : engine_(seed) {}
  double Uniform(double lo, double hi) { return lo + (hi - lo) * (engine_() / 4294967296.0); }
  int Percent() { return static_cast<int>(engine_() % 100); }

 private:
  std::mt19937 engine_;
};

// 70% small (4-9 GB, 10-20% of a GPU, 5-30 min), 22% medium (15-35 GB, 30-50%, 20-60 min),
// 8% whole-GPU (60-78 GB, all of it, 30-120 min), arriving over the first two hours.
std::vector<Job> Trace(int count, uint32_t seed, double speed) {
  Rng rng(seed);
  std::vector<Job> jobs;
  for (int i = 0; i < count; ++i) {
    Job j;
    j.id = i + 1;
    j.arrive_s = rng.Uniform(0, 7200);
    int kind = rng.Percent();
    if (kind < 70) {
      j.mem = static_cast<uint64_t>(rng.Uniform(4, 9)) * kGB;
      j.use = rng.Uniform(0.10, 0.20);
      j.work_s = rng.Uniform(300, 1800);
    } else if (kind < 92) {
      j.mem = static_cast<uint64_t>(rng.Uniform(15, 35)) * kGB;
      j.use = rng.Uniform(0.30, 0.50);
      j.work_s = rng.Uniform(1200, 3600);
    } else {
      j.mem = static_cast<uint64_t>(rng.Uniform(60, 78)) * kGB;
      j.use = 1.0;
      j.work_s = rng.Uniform(1800, 7200);
      j.whole = true;
    }
    j.work_s /= speed;
    jobs.push_back(j);
  }
  std::sort(jobs.begin(), jobs.end(),
            [](const Job& a, const Job& b) { return a.arrive_s < b.arrive_s; });
  for (size_t i = 0; i < jobs.size(); ++i) jobs[i].id = static_cast<int>(i) + 1;
  return jobs;
}

enum class Policy { kOnePerGpu, kMps, kStaticMig, kDynamicMig };

// A device the scheduler sees: a whole GPU, or a MIG instance (its GPU, profile, compute share).
struct Dev {
  int gpu = 0;
  std::string profile = "";  // "" : a whole GPU
  int instance_id = 0;
  int start = 0;
  double compute = 1;
  uint64_t mem = 80 * kGB;
  double ready_s = 0;  // a created instance serves from then on
  double created_s = 0;
  double idle_since_s = 0;
  bool destroying = false;
  double gone_s = 0;  // a destroyed instance is gone then
  int for_job = 0;    // a created instance: the job it was made for (no new want meanwhile)
};

struct Result {
  std::string policy;
  double makespan_s = 0;
  double mean_wait_s = 0;
  double gpu_hours = 0;  // GPUs with at least one job (or instance at work), integrated
  int never_ran = 0;
  int reshapes = 0;  // instances created and destroyed
};

std::vector<Dev> StaticLayout(const mig::Model& model,
                              const std::vector<std::pair<std::string, int>>& per_gpu,
                              const std::vector<int>& gpus) {
  std::vector<Dev> devs;
  for (int g : gpus) {
    int id = 1;
    for (const auto& [profile, start] : per_gpu) {
      const mig::Profile* p = model.Find(profile);
      Dev d;
      d.gpu = g;
      d.profile = profile;
      d.instance_id = id++;
      d.start = start;
      d.compute = p->compute_slices / 7.0;
      d.mem = p->mem_bytes;
      devs.push_back(d);
    }
  }
  return devs;
}

sched::Inventory InventoryOf(const std::vector<Dev>& devs, Policy policy, double now) {
  sched::Inventory inv;
  inv.host.cpus = 4096;
  inv.host.mem_bytes = 65536 * kGB;
  for (size_t i = 0; i < devs.size(); ++i) {
    const Dev& d = devs[i];
    sched::Device s;
    s.index = static_cast<int>(i);
    s.gpu_index = d.gpu;
    s.uuid = "D" + std::to_string(i);
    s.mem_bytes = d.mem;
    if (!d.profile.empty()) s.partition = pinpoint::partition::Partition::Instance(d.profile);
    if (policy == Policy::kMps) {
      s.rules = {.whole_device = false, .one_user = true, .max_jobs = 48, .no_slices_reason = ""};
    } else {
      s.rules = {.whole_device = true, .one_user = false, .max_jobs = 1, .no_slices_reason = ""};
    }
    s.drained = d.destroying || d.ready_s > now;
    inv.devices.push_back(s);
  }
  return inv;
}

// Speeds of the running jobs on one device, by the model above.
void SetSpeeds(std::vector<Job*>& on, const Dev& d, Policy policy, std::map<int, double>& speed) {
  if (on.empty()) return;
  if (policy != Policy::kMps || on.size() == 1) {
    for (Job* j : on) speed[j->id] = std::min(d.compute, j->use) / j->use;
    return;
  }
  // Water-filling: each gets at most its use; what the small ones leave goes to the others.
  std::vector<Job*> sorted = on;
  std::sort(sorted.begin(), sorted.end(), [](Job* a, Job* b) { return a->use < b->use; });
  double left = 1.0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    double share = left / static_cast<double>(sorted.size() - i);
    double got = std::min(share, sorted[i]->use);
    left -= got;
    speed[sorted[i]->id] = got / sorted[i]->use * (1 - kMpsInterference);
  }
}

Result Run(std::vector<Job> jobs, Policy policy, const std::string& name, const mig::Model& model,
           std::vector<Dev> devs) {
  Result r;
  r.policy = name;
  if (policy == Policy::kOnePerGpu || policy == Policy::kMps) {
    for (int g = 0; g < kGpus; ++g) {
      Dev whole;
      whole.gpu = g;
      devs.push_back(whole);
    }
  }
  std::vector<mig::Gpu> gpus(kGpus);
  for (int g = 0; g < kGpus; ++g) gpus[static_cast<size_t>(g)] = mig::Gpu{g, model, {}};
  int next_instance = 1000;
  size_t arrived = 0;
  int done = 0;
  double now = 0;
  const double horizon = 7 * 24 * 3600;
  std::map<int, int> jobs_on;  // device -> running jobs
  while (done < static_cast<int>(jobs.size()) && now < horizon) {
    // Arrivals; instances whose destroy completed leave.
    while (arrived < jobs.size() && jobs[arrived].arrive_s <= now) ++arrived;
    std::erase_if(devs, [&](const Dev& d) { return d.destroying && d.gone_s <= now; });
    std::map<int, int> index_of;  // job id -> index in jobs
    for (size_t i = 0; i < jobs.size(); ++i) index_of[jobs[i].id] = static_cast<int>(i);
    if (policy == Policy::kDynamicMig) {
      // The planner's view: each GPU's instances, their jobs and ages; the queue's wants.
      for (auto& g : gpus) g.instances.clear();
      for (size_t i = 0; i < devs.size(); ++i) {
        const Dev& d = devs[i];
        int running = 0;
        for (const Job& j : jobs)
          running += j.start_s >= 0 && j.end_s < 0 && j.device == static_cast<int>(i);
        gpus[static_cast<size_t>(d.gpu)].instances.push_back(
            {d.instance_id, d.profile, d.start, running + (d.destroying || d.ready_s > now ? 1 : 0),
             static_cast<int64_t>(d.created_s * 1000),
             static_cast<int64_t>(d.idle_since_s * 1000)});
      }
      // A job an instance is being made for is no new want until the instance serves.
      std::vector<bool> awaited(jobs.size() + 1, false);
      for (const Dev& d : devs)
        if (d.ready_s > now && d.for_job > 0) awaited[static_cast<size_t>(d.for_job)] = true;
      std::vector<mig::Want> wants;
      for (size_t i = 0; i < arrived; ++i)
        if (jobs[i].start_s < 0 && !awaited[static_cast<size_t>(jobs[i].id)])
          wants.push_back({jobs[i].id, jobs[i].mem, ""});
      mig::Plan plan = mig::PlanLayout(gpus, wants, static_cast<int64_t>(now * 1000));
      for (const mig::Destroy& x : plan.destroys) {
        for (Dev& d : devs)
          if (d.gpu == x.gpu && d.instance_id == x.instance_id && !d.destroying) {
            d.destroying = true;
            d.gone_s = now + kDestroyS;
            ++r.reshapes;
          }
      }
      for (const mig::Create& c : plan.creates) {
        const mig::Profile* p = model.Find(c.profile);
        Dev d;
        d.gpu = c.gpu;
        d.profile = c.profile;
        d.instance_id = next_instance++;
        d.start = c.start;
        d.compute = p->compute_slices / 7.0;
        d.mem = p->mem_bytes;
        // After the destroys it waits on (on its GPU) and its own creation.
        double after = now;
        for (const Dev& o : devs)
          if (o.gpu == c.gpu && o.destroying) after = std::max(after, o.gone_s);
        d.ready_s = after + kCreateS;
        d.created_s = d.ready_s;
        d.idle_since_s = d.ready_s;
        d.for_job = static_cast<int>(c.for_job);
        devs.push_back(d);
        ++r.reshapes;
      }
    }
    // The scheduler places what waits onto the devices that serve now.
    sched::Snapshot snap;
    snap.inventory = InventoryOf(devs, policy, now);
    for (Job& j : jobs) {
      if (j.start_s >= 0 && j.end_s < 0) {
        uint64_t mem =
            policy == Policy::kMps && j.whole ? devs[static_cast<size_t>(j.device)].mem : j.mem;
        snap.running.push_back({j.id, 1000, 1, 0, {{j.device, mem, 0, false}}, 0});
      }
    }
    for (size_t i = 0; i < arrived; ++i) {
      const Job& j = jobs[i];
      if (j.start_s >= 0) continue;
      sched::Demand d;
      d.id = j.id;
      d.uid = 1000;
      d.gpus = 1;
      bool whole = j.whole && (policy == Policy::kMps || policy == Policy::kOnePerGpu);
      d.gpu_mem_bytes = whole ? 0 : j.mem;
      snap.pending.push_back(d);
    }
    size_t started = 0;
    if (!snap.pending.empty()) {
      sched::Plan plan = sched::Schedule(snap);
      started = plan.starts.size();
      for (const sched::Start& s : plan.starts) {
        Job& j = jobs[static_cast<size_t>(index_of.at(static_cast<int>(s.id)))];
        j.start_s = now;
        j.left_s = j.work_s;
        j.device = s.slots.front().device_index;
      }
    }
    // Speeds, then the tick's progress; a job that ends frees its device at the tick's end.
    std::map<int, std::vector<Job*>> by_device;
    for (Job& j : jobs)
      if (j.start_s >= 0 && j.end_s < 0) by_device[j.device].push_back(&j);
    std::map<int, double> speed;
    std::vector<bool> gpu_busy(kGpus, false);
    for (auto& [device, on] : by_device) {
      SetSpeeds(on, devs[static_cast<size_t>(device)], policy, speed);
      gpu_busy[static_cast<size_t>(devs[static_cast<size_t>(device)].gpu)] = true;
    }
    for (bool busy : gpu_busy) r.gpu_hours += busy ? kTickS / 3600 : 0;
    // Nothing runs, nothing is being reshaped and nothing more can start: what waits never will.
    bool reshaping = std::any_of(devs.begin(), devs.end(),
                                 [&](const Dev& d) { return d.destroying || d.ready_s > now; });
    // (Dynamic MIG may still make room once idle instances pass their minimums: it runs on.)
    if (policy != Policy::kDynamicMig && arrived == jobs.size() && by_device.empty() &&
        started == 0 && !reshaping)
      break;
    for (auto& [device, on] : by_device) {
      for (Job* j : on) {
        j->left_s -= speed[j->id] * kTickS;
        if (j->left_s <= 0) {
          j->end_s = now + kTickS;
          ++done;
          if (on.size() == 1) devs[static_cast<size_t>(device)].idle_since_s = j->end_s;
        }
      }
    }
    now += kTickS;
  }
  double waits = 0;
  for (const Job& j : jobs) {
    if (j.end_s < 0) {
      ++r.never_ran;
      continue;
    }
    r.makespan_s = std::max(r.makespan_s, j.end_s);
    waits += j.start_s - j.arrive_s;
  }
  int ran = static_cast<int>(jobs.size()) - r.never_ran;
  r.mean_wait_s = ran > 0 ? waits / ran : 0;
  return r;
}

std::string Row(const Result& r, double base_makespan) {
  char line[256];
  if (r.never_ran > 0) {
    std::snprintf(line, sizeof line, "| %s | never: %d jobs fit no instance | | | |",
                  r.policy.c_str(), r.never_ran);
    return line;
  }
  std::snprintf(line, sizeof line, "| %s | %.2f | %.2fx | %.1f | %.1f | %d |", r.policy.c_str(),
                r.makespan_s / 3600, base_makespan / r.makespan_s, r.mean_wait_s / 60, r.gpu_hours,
                r.reshapes);
  return line;
}

std::string Report(const std::string& node, const mig::Model& model, const std::vector<Job>& jobs) {
  std::vector<Result> results;
  results.push_back(Run(jobs, Policy::kOnePerGpu, "one job per GPU", model, {}));
  results.push_back(Run(jobs, Policy::kMps, "MPS only (pinpoint's slices)", model, {}));
  // Static layouts an administrator might draw: the best that runs every job is compared.
  std::vector<int> all = {0, 1, 2, 3, 4, 5, 6, 7};
  struct Layout {
    std::string name;
    std::vector<Dev> devs;
  };
  auto part = [&](const std::vector<std::pair<std::string, int>>& per, std::vector<int> on) {
    return StaticLayout(model, per, on);
  };
  std::vector<std::pair<std::string, int>> sevens = {{"1g.10gb", 0}, {"1g.10gb", 1}, {"1g.10gb", 2},
                                                     {"1g.10gb", 3}, {"1g.10gb", 4}, {"1g.10gb", 5},
                                                     {"1g.10gb", 6}};
  std::vector<std::pair<std::string, int>> mixed = {{"3g.40gb", 0}, {"2g.20gb", 4}, {"1g.10gb", 6}};
  std::vector<std::pair<std::string, int>> halves = {{"3g.40gb", 0}, {"3g.40gb", 4}};
  std::vector<std::pair<std::string, int>> whole = {{"7g.80gb", 0}};
  std::vector<Layout> layouts;
  auto cat = [](std::vector<Dev> a, const std::vector<Dev>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  layouts.push_back(
      {"4x 7x1g.10gb, 2x 2x3g.40gb, 2x 7g.80gb",
       cat(cat(part(sevens, {0, 1, 2, 3}), part(halves, {4, 5})), part(whole, {6, 7}))});
  layouts.push_back(
      {"4x 3g+2g+1g, 2x 2x3g.40gb, 2x 7g.80gb",
       cat(cat(part(mixed, {0, 1, 2, 3}), part(halves, {4, 5})), part(whole, {6, 7}))});
  layouts.push_back(
      {"3x 7x1g.10gb, 3x 3g+2g+1g, 2x 7g.80gb",
       cat(cat(part(sevens, {0, 1, 2}), part(mixed, {3, 4, 5})), part(whole, {6, 7}))});
  layouts.push_back(
      {"5x 7x1g.10gb, 1x 2x3g.40gb, 2x 7g.80gb",
       cat(cat(part(sevens, {0, 1, 2, 3, 4}), part(halves, {5})), part(whole, {6, 7}))});
  layouts.push_back({"8x 7x1g.10gb", part(sevens, all)});
  std::vector<Result> statics;
  for (const Layout& l : layouts)
    statics.push_back(Run(jobs, Policy::kStaticMig, "static MIG: " + l.name, model, l.devs));
  const Result* best = nullptr;
  for (const Result& s : statics)
    if (s.never_ran == 0 && (best == nullptr || s.makespan_s < best->makespan_s)) best = &s;
  results.push_back(Run(jobs, Policy::kDynamicMig, "dynamic MIG (PlanLayout)", model, {}));
  std::ostringstream out;
  out << "### " << node << "\n\n";
  out << "| policy | makespan (h) | throughput vs one per GPU | mean wait (min) | busy GPU-hours | "
         "instances made + destroyed |\n";
  out << "|---|---|---|---|---|---|\n";
  double base = results[0].makespan_s;
  for (const Result& r : results) out << Row(r, base) << "\n";
  if (best != nullptr) out << Row(*best, base) << " (the best static layout)\n";
  out << "\nEvery static layout tried:\n\n";
  out << "| policy | makespan (h) | throughput vs one per GPU | mean wait (min) | busy GPU-hours | "
         "instances |\n";
  out << "|---|---|---|---|---|---|\n";
  for (const Result& s : statics) out << Row(s, base) << "\n";
  return out.str();
}

}  // namespace

int main(int argc, char** argv) {
  int count = 600;
  uint32_t seed = 26;
  std::string out_path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--jobs" && i + 1 < argc)
      count = std::atoi(argv[++i]);
    else if (a == "--seed" && i + 1 < argc)
      seed = static_cast<uint32_t>(std::atoi(argv[++i]));
    else if (a == "--out" && i + 1 < argc)
      out_path = argv[++i];
    else {
      std::fprintf(stderr, "usage: mig_sim_bench [--jobs N] [--seed S] [--out FILE]\n");
      return 2;
    }
  }
  if (count < 1 || count > 100000) {
    std::fprintf(stderr, "mig_sim_bench: --jobs must be 1 to 100000\n");
    return 2;
  }
  std::ostringstream report;
  report << "# Dynamic MIG, simulated: " << count << " jobs (seed " << seed << ")\n\n";
  report << "Produced by `mig_sim_bench --jobs " << count << " --seed " << seed
         << "`. The trace: 70% small\n"
         << "trainings (4-9 GB, 10-20% of a GPU, 5-30 min alone on a GPU), 22% medium (15-35 GB, "
            "30-50%,\n"
         << "20-60 min), 8% whole-GPU jobs (60-78 GB, all of it, 30-120 min), arriving over two "
            "hours.\n"
         << "The H100 runs the same trace in half the time (its jobs' work halved).\n\n";
  report << Report("8x A100-SXM4-80GB", mig::A100_80GB(), Trace(count, seed, 1.0)) << "\n";
  report << Report("8x H100-SXM5-80GB", mig::H100_80GB(), Trace(count, seed, 2.0)) << "\n";
  report << "Model: a job that can use a share u of a GPU runs at speed min(c, u) / u on compute "
            "c; a MIG\n"
         << "instance of g compute slices is c = g/7; MPS shares a GPU's compute among its jobs "
            "(each at\n"
         << "most its u) and costs each " << static_cast<int>(kMpsInterference * 100)
         << "% of its speed while it is not alone. A GPU instance takes " << kCreateS
         << " s to create\n"
         << "and " << kDestroyS << " s to destroy; ticks of " << kTickS
         << " s. Whole-GPU jobs ask for a whole GPU under\n"
         << "MPS and one-per-GPU and for a 7g.80gb slice under MIG. All jobs are one user's.\n";
  if (out_path.empty()) {
    std::fputs(report.str().c_str(), stdout);
  } else {
    std::ofstream(out_path) << report.str();
  }
  return 0;
}
