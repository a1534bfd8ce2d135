#include "cli/advice.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "pinpoint/escape.h"
#include "pinpoint/units.h"

namespace pinpoint::cli {

using nlohmann::json;

namespace {

constexpr uint64_t kStep = 256ull << 20;

}  // namespace

uint64_t SuggestedGpuMem(uint64_t peak_bytes) {
  uint64_t headroom = std::max<uint64_t>(peak_bytes / 10, kStep);
  uint64_t want = peak_bytes + headroom;
  return (want + kStep - 1) / kStep * kStep;
}

Advice AdviseJob(const JobView& job) {
  Advice a;
  const JobUsage& usage = job.usage;
  const JobRequest& req = job.request;
  int64_t samples = usage.samples;
  if (req.gpus == 0) {
    a.text = "no GPU asked for";
    return a;
  }
  if (samples < kMinSamplesForAdvice) {
    a.text = fmt::format("too little data to advise: seen in {} watcher poll{}", samples,
                         samples == 1 ? "" : "s");
    return a;
  }
  uint64_t peak = usage.gpu_mem_peak_bytes;
  if (peak == 0) {
    a.text =
        "no device memory use was seen (a CPU-only job, or a driver that hides per-process memory)";
    return a;
  }
  a.enough_data = true;
  a.suggested_gpu_mem_bytes = SuggestedGpuMem(peak);
  uint64_t asked = req.gpu_mem_bytes;
  std::string next = "--gpu-mem " + FormatSize(a.suggested_gpu_mem_bytes);
  if (asked == 0) {
    int util = usage.util_pct_mean;
    std::string busy = util >= 0 ? fmt::format(", GPU busy {}% of the time", util) : "";
    a.text = fmt::format("held whole GPUs, peaked at {}{}: a slice would do: {}", FormatSize(peak),
                         busy, next);
    return a;
  }
  double used = static_cast<double>(peak) / static_cast<double>(asked);
  if (a.suggested_gpu_mem_bytes < asked)
    a.text = fmt::format("peaked at {} of {} asked ({:.0f}%): next time {}", FormatSize(peak),
                         FormatSize(asked), used * 100, next);
  else if (a.suggested_gpu_mem_bytes > asked)
    a.text = fmt::format("peaked at {} of {} asked ({:.0f}%), too close for comfort: next time {}",
                         FormatSize(peak), FormatSize(asked), used * 100, next);
  else
    a.text = fmt::format("peaked at {} of {} asked ({:.0f}%): the request fits", FormatSize(peak),
                         FormatSize(asked), used * 100);
  return a;
}

std::optional<double> ReportRow::UnusedMemPct() const {
  if (asked_gib_hours <= 0) return std::nullopt;
  return 100.0 * (1 - peak_gib_hours / asked_gib_hours);
}

std::optional<double> ReportRow::WholeGpuUtilPct() const {
  if (whole_known_hours <= 0) return std::nullopt;
  return whole_util_gpu_hours / whole_known_hours;
}

namespace {

void Add(ReportRow& t, const JobView& job) {
  const JobRequest& req = job.request;
  const JobUsage& usage = job.usage;
  double hours = job.start_ms > 0 && job.end_ms > job.start_ms
                     ? static_cast<double>(job.end_ms - job.start_ms) / 3.6e6
                     : 0;
  double gpus = static_cast<double>(req.gpus);
  t.jobs += 1;
  t.energy_kj += static_cast<double>(usage.energy_mj) / 1e6;
  if (job.reason == reason::kGpuMemExceeded) t.gpu_mem_exceeded += 1;
  for (const Enforcement& e : job.enforcement) t.verdicts[e.verdict] += 1;
  if (req.gpus == 0) return;
  if (req.gpu_mem_bytes > 0) {
    t.slice_jobs += 1;
    if (usage.samples >= kMinSamplesForAdvice) {
      t.asked_gib_hours += static_cast<double>(req.gpu_mem_bytes) / (1ull << 30) * gpus * hours;
      t.peak_gib_hours +=
          static_cast<double>(usage.gpu_mem_peak_bytes) / (1ull << 30) * gpus * hours;
    }
    return;
  }
  t.whole_gpu_hours += gpus * hours;
  if (usage.util_pct_mean >= 0) {
    t.whole_util_gpu_hours += static_cast<double>(usage.util_pct_mean) * gpus * hours;
    t.whole_known_hours += gpus * hours;
  }
}

json OptionalNumber(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json ToJson(const ReportRow& r) {
  return json{{"user", r.user},
              {"jobs", r.jobs},
              {"slice_jobs", r.slice_jobs},
              {"asked_gib_hours", r.asked_gib_hours},
              {"peak_gib_hours", r.peak_gib_hours},
              {"unused_mem_pct", OptionalNumber(r.UnusedMemPct())},
              {"whole_gpu_hours", r.whole_gpu_hours},
              {"whole_gpu_util_pct", OptionalNumber(r.WholeGpuUtilPct())},
              {"energy_kj", r.energy_kj},
              {"gpu_mem_exceeded", r.gpu_mem_exceeded},
              {"verdicts", r.verdicts}};
}

}  // namespace

UsageReport Report(const std::vector<JobView>& jobs) {
  std::map<std::string, ReportRow> users;
  UsageReport report;
  report.total.user = "(all)";
  for (const auto& job : jobs) {
    if (!IsFinal(job.state)) continue;
    ReportRow& row = users[job.user];
    row.user = job.user;
    Add(row, job);
    Add(report.total, job);
  }
  for (auto& [user, row] : users) report.users.push_back(std::move(row));
  return report;
}

json ToJson(const UsageReport& report) {
  json rows = json::array();
  for (const auto& row : report.users) rows.push_back(ToJson(row));
  return json{{"users", rows}, {"total", ToJson(report.total)}};
}

std::string FormatReport(const UsageReport& report) {
  auto pct = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.0f}%", *v) : std::string("-");
  };
  std::string out =
      fmt::format("{:<16} {:>6} {:>7} {:>12} {:>12} {:>7} {:>10} {:>6} {:>12} {:>9}\n", "USER",
                  "JOBS", "SLICES", "ASKED GiB-h", "PEAK GiB-h", "UNUSED", "WHOLE GPU-h", "BUSY",
                  "ENERGY kJ", "MEM-KILL");
  auto line = [&](const ReportRow& r) {
    out += fmt::format(
        "{:<16} {:>6} {:>7} {:>12.2f} {:>12.2f} {:>7} {:>10.2f} {:>6} {:>12.1f} {:>9}\n",
        EscapeForTerminal(r.user), r.jobs, r.slice_jobs, r.asked_gib_hours, r.peak_gib_hours,
        pct(r.UnusedMemPct()), r.whole_gpu_hours, pct(r.WholeGpuUtilPct()), r.energy_kj,
        r.gpu_mem_exceeded);
  };
  for (const auto& r : report.users) line(r);
  line(report.total);
  if (report.total.verdicts.empty()) return out;
  // What the jobs really had (docs/enforcement.md): each user's entries by verdict.
  out += "\nenforcement verdicts (resources of ended jobs):\n";
  auto verdicts = [&](const ReportRow& r) {
    std::string text;
    for (const auto& [verdict, count] : r.verdicts)
      text += (text.empty() ? "" : ", ") + EscapeForTerminal(verdict) + " " + std::to_string(count);
    out += fmt::format("{:<16} {}\n", EscapeForTerminal(r.user), text);
  };
  for (const auto& r : report.users) verdicts(r);
  verdicts(report.total);
  return out;
}

}  // namespace pinpoint::cli
