// Times sched::EstimateStarts, what `pinpoint queue --start` costs the daemon's loop: the node
// played forward over the most the daemon plays (kStartEstimateJobs pending jobs, at most
// kStartEstimatePasses passes), on an 8-GPU node and on a 64-GPU one, every job with a time
// limit so that the play runs to its end. Target: under 100 ms (a request's cost, paid in the
// loop).
//
//   start_estimate_bench [--reps N] [--out FILE]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "daemon/node/node.h"
#include "mps/mps_backend.h"
#include "sched/start_estimate.h"

namespace {

using namespace pinpoint::sched;  // NOLINT(google-build-using-namespace)
using pinpoint::daemon::kStartEstimateJobs;
using pinpoint::daemon::kStartEstimatePasses;

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr int64_t kNow = 1'800'000'000'000;
constexpr int64_t kMin = 60'000;

struct Scenario {
  std::string name;
  int gpus;
  Snapshot snap;
  std::map<JobId, int64_t> ends, runs;
};

// `gpus` 80GiB MPS GPUs, each holding two running slices; kStartEstimateJobs pending jobs: 70%
// slices of 2-40GiB, 20% one or two whole GPUs, 10% four; limits of 10 minutes to 8 hours.
Scenario Make(const std::string& name, int gpus, uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % uint32_t(hi - lo + 1)); };
  Scenario s{name, gpus, {}, {}, {}};
  s.snap.inventory.host.cpus = 64 * gpus;
  s.snap.inventory.host.mem_bytes = 256 * kGiB * uint64_t(gpus);
  JobId id = 1;
  for (int i = 0; i < gpus; ++i) {
    Device d;
    d.index = i;
    d.gpu_index = i;
    d.uuid = "GPU-" + std::to_string(i);
    d.mem_bytes = 80 * kGiB;
    d.mode = pinpoint::SharingMode::kMps;
    d.rules = pinpoint::mps::MpsRules(48);
    s.snap.inventory.devices.push_back(d);
    for (int k = 0; k < 2; ++k, ++id) {
      s.snap.running.push_back(
          {id, 1000, 1, 0, {Slot{i, uint64_t(pick(4, 30)) * kGiB, 0, false}}, 0});
      s.ends[id] = kNow + pick(1, 240) * kMin;
    }
  }
  for (size_t i = 0; i < kStartEstimateJobs; ++i, ++id) {
    Demand d;
    d.id = id;
    d.uid = 1000 + uint32_t(pick(0, 9));
    int kind = pick(0, 9);
    if (kind < 7) {
      d.gpus = 1;
      d.gpu_mem_bytes = uint64_t(pick(2, 40)) * kGiB;
    } else {
      d.gpus = std::min(gpus, kind < 9 ? pick(1, 2) : 4);
    }
    s.snap.pending.push_back(d);
    s.runs[id] = pick(10, 480) * kMin;
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 15;
  std::string out_path;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc)
      out_path = argv[++i];
  }
  std::ostringstream table;
  table << "| node | running jobs | pending jobs played | p50 ms | max ms | estimated | unknown |\n"
        << "|---|---|---|---|---|---|---|\n";
  for (const Scenario& s : {Make("8 GPUs", 8, 1), Make("64 GPUs", 64, 2)}) {
    std::vector<double> ms;
    std::vector<StartEstimate> last;
    for (int r = 0; r < reps; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      last = EstimateStarts(s.snap, s.ends, s.runs, kNow, kStartEstimatePasses);
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    size_t known = std::count_if(last.begin(), last.end(),
                                 [](const StartEstimate& e) { return e.start_ms.has_value(); });
    char row[256];
    std::snprintf(row, sizeof(row), "| %s | %zu | %zu | %.2f | %.2f | %zu | %zu |\n",
                  s.name.c_str(), s.snap.running.size(), s.snap.pending.size(), ms[ms.size() / 2],
                  ms.back(), known, last.size() - known);
    table << row;
  }
  std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::ostringstream report;
  report << "# start_estimate_bench: what `pinpoint queue --start` costs the daemon\n\n"
         << "- Date: " << date << "\n- Repetitions: " << reps
         << " per node; target: max under 100 ms\n\n"
         << table.str();
  std::fputs(report.str().c_str(), stdout);
  if (!out_path.empty()) std::ofstream(out_path) << report.str();
  return 0;
}
