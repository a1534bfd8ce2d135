#include "cli/advice.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "cli/format.h"
#include "pinpoint/units.h"

namespace pinpoint::cli {

using nlohmann::json;

namespace {

constexpr uint64_t kStep = 256ull << 20;

uint64_t U64(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number_unsigned() ? j[key].get<uint64_t>() : 0;
}
int64_t I64(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number_integer() ? j[key].get<int64_t>() : 0;
}

}  // namespace

uint64_t SuggestedGpuMem(uint64_t peak_bytes) {
  uint64_t headroom = std::max<uint64_t>(peak_bytes / 10, kStep);
  uint64_t want = peak_bytes + headroom;
  return (want + kStep - 1) / kStep * kStep;
}

Advice AdviseJob(const json& job) {
  Advice a;
  const json& usage = job.contains("usage") ? job["usage"] : json::object();
  const json& req = job["request"];
  int64_t samples = I64(usage, "samples");
  if (I64(req, "gpus") == 0) {
    a.text = "no GPU asked for";
    return a;
  }
  if (samples < kMinSamplesForAdvice) {
    a.text = fmt::format("too little data to advise: seen in {} watcher poll{}", samples, samples == 1 ? "" : "s");
    return a;
  }
  uint64_t peak = U64(usage, "gpu_mem_peak_bytes");
  if (peak == 0) {
    a.text = "no device memory use was seen (a CPU-only job, or a driver that hides per-process memory)";
    return a;
  }
  a.enough_data = true;
  a.suggested_gpu_mem_bytes = SuggestedGpuMem(peak);
  uint64_t asked = U64(req, "gpu_mem_bytes");
  std::string next = "--gpu-mem " + FormatSize(a.suggested_gpu_mem_bytes);
  if (asked == 0) {
    int util = static_cast<int>(I64(usage, "util_pct_mean"));
    std::string busy = util >= 0 ? fmt::format(", GPU busy {}% of the time", util) : "";
    a.text = fmt::format("held whole GPUs, peaked at {}{}: a slice would do: {}", FormatSize(peak), busy, next);
    return a;
  }
  double used = static_cast<double>(peak) / static_cast<double>(asked);
  if (a.suggested_gpu_mem_bytes < asked)
    a.text = fmt::format("peaked at {} of {} asked ({:.0f}%): next time {}", FormatSize(peak), FormatSize(asked), used * 100, next);
  else if (a.suggested_gpu_mem_bytes > asked)
    a.text = fmt::format("peaked at {} of {} asked ({:.0f}%), too close for comfort: next time {}", FormatSize(peak),
                         FormatSize(asked), used * 100, next);
  else
    a.text = fmt::format("peaked at {} of {} asked ({:.0f}%): the request fits", FormatSize(peak), FormatSize(asked), used * 100);
  return a;
}

namespace {

struct Totals {
  int64_t jobs = 0;
  int64_t slice_jobs = 0;
  double asked_gib_h = 0;     // slices: device memory asked x devices x hours
  double peak_gib_h = 0;      // slices: peak x devices x hours (jobs with usage only)
  double whole_gpu_h = 0;
  double whole_util_gpu_h = 0;  // whole-GPU hours weighted by utilisation (where known)
  double whole_known_h = 0;
  double energy_kj = 0;
  int64_t gpu_mem_exceeded = 0;
};

json ToJson(const std::string& user, const Totals& t) {
  json j{{"user", user},
         {"jobs", t.jobs},
         {"slice_jobs", t.slice_jobs},
         {"asked_gib_hours", t.asked_gib_h},
         {"peak_gib_hours", t.peak_gib_h},
         {"unused_mem_pct", t.asked_gib_h > 0 ? json(100.0 * (1 - t.peak_gib_h / t.asked_gib_h)) : json(nullptr)},
         {"whole_gpu_hours", t.whole_gpu_h},
         {"whole_gpu_util_pct", t.whole_known_h > 0 ? json(t.whole_util_gpu_h / t.whole_known_h) : json(nullptr)},
         {"energy_kj", t.energy_kj},
         {"gpu_mem_exceeded", t.gpu_mem_exceeded}};
  return j;
}

void Add(Totals& t, const json& job) {
  const json& req = job["request"];
  const json& usage = job.contains("usage") ? job["usage"] : json::object();
  int64_t start = I64(job, "start_ms"), end = I64(job, "end_ms");
  double hours = start > 0 && end > start ? (end - start) / 3.6e6 : 0;
  int64_t gpus = I64(req, "gpus");
  t.jobs += 1;
  t.energy_kj += U64(usage, "energy_mj") / 1e6;
  if (job.value("reason", "") == "gpu-mem-exceeded") t.gpu_mem_exceeded += 1;
  if (gpus == 0) return;
  uint64_t asked = U64(req, "gpu_mem_bytes");
  if (asked > 0) {
    t.slice_jobs += 1;
    if (I64(usage, "samples") >= kMinSamplesForAdvice) {
      t.asked_gib_h += static_cast<double>(asked) / (1ull << 30) * static_cast<double>(gpus) * hours;
      t.peak_gib_h += static_cast<double>(U64(usage, "gpu_mem_peak_bytes")) / (1ull << 30) * static_cast<double>(gpus) * hours;
    }
    return;
  }
  t.whole_gpu_h += static_cast<double>(gpus) * hours;
  int64_t util = usage.contains("util_pct_mean") && usage["util_pct_mean"].is_number_integer() ? usage["util_pct_mean"].get<int64_t>() : -1;
  if (util >= 0) {
    t.whole_util_gpu_h += static_cast<double>(util) * static_cast<double>(gpus) * hours;
    t.whole_known_h += static_cast<double>(gpus) * hours;
  }
}

}  // namespace

json Report(const json& jobs) {
  std::map<std::string, Totals> users;
  Totals all;
  for (const auto& job : jobs) {
    std::string state = job.value("state", "");
    if (state == "pending" || state == "running") continue;
    Add(users[job.value("user", "?")], job);
    Add(all, job);
  }
  json rows = json::array();
  for (const auto& [user, t] : users) rows.push_back(ToJson(user, t));
  return json{{"users", rows}, {"total", ToJson("(all)", all)}};
}

std::string FormatReport(const json& report) {
  auto pct = [](const json& v) { return v.is_number() ? fmt::format("{:.0f}%", v.get<double>()) : std::string("-"); };
  std::string out = fmt::format("{:<16} {:>6} {:>7} {:>12} {:>12} {:>7} {:>10} {:>6} {:>12} {:>9}\n", "USER", "JOBS",
                                "SLICES", "ASKED GiB-h", "PEAK GiB-h", "UNUSED", "WHOLE GPU-h", "BUSY", "ENERGY kJ",
                                "MEM-KILL");
  auto line = [&](const json& r) {
    out += fmt::format("{:<16} {:>6} {:>7} {:>12.2f} {:>12.2f} {:>7} {:>10.2f} {:>6} {:>12.1f} {:>9}\n",
                       ShownText(r, "user"), r["jobs"].get<int64_t>(), r["slice_jobs"].get<int64_t>(),
                       r["asked_gib_hours"].get<double>(), r["peak_gib_hours"].get<double>(), pct(r["unused_mem_pct"]),
                       r["whole_gpu_hours"].get<double>(), pct(r["whole_gpu_util_pct"]), r["energy_kj"].get<double>(),
                       r["gpu_mem_exceeded"].get<int64_t>());
  };
  for (const auto& r : report["users"]) line(r);
  line(report["total"]);
  return out;
}

}  // namespace pinpoint::cli
