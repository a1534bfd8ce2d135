#include "cli/report_csv.h"

#include <fmt/format.h>
#include <time.h>

#include <optional>

namespace pinpoint::cli {
namespace {

std::string Row(const std::vector<std::string>& cells) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) line += (i > 0 ? "," : "") + cells[i];
  return line + "\r\n";
}

std::string Number(double v) { return fmt::format("{:.3f}", v); }
std::string Number(const std::optional<double>& v) { return v ? Number(*v) : std::string(); }

std::string UtcTime(int64_t ms) {
  if (ms <= 0) return "";
  time_t t = static_cast<time_t>(ms / 1000);
  tm utc{};
  if (::gmtime_r(&t, &utc) == nullptr) return "";
  char text[32];
  ::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace

std::string CsvText(std::string_view text) {
  // A spreadsheet may split a line at any of these, not only at the comma; and after a split, a
  // cell may open with quotes or spaces before the sign.
  constexpr std::string_view kSeparators = ",;\t|";
  constexpr std::string_view kFormulaStart = "=+-@\t\r";
  std::string cell;
  bool field_start = true;
  for (char c : text) {
    if (field_start && kFormulaStart.find(c) != std::string_view::npos) cell += '\'';
    cell += c;
    if (kSeparators.find(c) != std::string_view::npos)
      field_start = true;
    else if (c != '"' && c != ' ')
      field_start = false;
  }
  if (cell.find_first_of(",\"\r\n") == std::string::npos) return cell;
  std::string quoted = "\"";
  for (char c : cell) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string ReportCsv(const UsageReport& report) {
  std::string out =
      Row({"user", "jobs", "slice_jobs", "asked_gib_hours", "peak_gib_hours", "unused_mem_pct",
           "whole_gpu_hours", "whole_gpu_util_pct", "energy_kj", "gpu_mem_exceeded"});
  auto line = [&](const ReportRow& r) {
    out += Row({CsvText(r.user), std::to_string(r.jobs), std::to_string(r.slice_jobs),
                Number(r.asked_gib_hours), Number(r.peak_gib_hours), Number(r.UnusedMemPct()),
                Number(r.whole_gpu_hours), Number(r.WholeGpuUtilPct()), Number(r.energy_kj),
                std::to_string(r.gpu_mem_exceeded)});
  };
  for (const auto& r : report.users) line(r);
  line(report.total);
  return out;
}

std::string JobsCsv(const std::vector<JobView>& jobs) {
  std::string out =
      Row({"id", "user", "name", "state", "reason", "submit_time", "start_time", "end_time", "gpus",
           "gpu_mem_bytes", "gpu_share_pct", "gpu_mem_peak_bytes", "energy_kj", "exit_code"});
  for (const auto& job : jobs) {
    if (!IsFinal(job.state)) continue;
    out +=
        Row({std::to_string(job.id), CsvText(job.user), CsvText(job.request.name),
             JobStateName(job.state), CsvText(job.reason), UtcTime(job.submit_ms),
             UtcTime(job.start_ms), UtcTime(job.end_ms), std::to_string(job.request.gpus),
             std::to_string(job.request.gpu_mem_bytes), std::to_string(job.request.gpu_share_pct),
             std::to_string(job.usage.gpu_mem_peak_bytes),
             Number(static_cast<double>(job.usage.energy_mj) / 1e6),
             job.exit_code ? std::to_string(*job.exit_code) : std::string()});
  }
  return out;
}

}  // namespace pinpoint::cli
