#include "bench/driver/breakdown.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace pinpoint::bench {

namespace {

using nlohmann::json;

// Milliseconds from `from` to `to` (epoch seconds), or nothing when either is unknown.
void AddSpan(std::vector<double>* out, double from, double to) {
  if (from > 0 && to > 0) out->push_back(1000.0 * (to - from));
}

StageStats Stats(const std::vector<double>& ms) {
  StageStats s;
  if (ms.empty()) return s;
  s.median_ms = Median(ms);
  s.max_ms = *std::max_element(ms.begin(), ms.end());
  s.count = static_cast<int>(ms.size());
  return s;
}

double Latest(const std::vector<JobResult>& jobs, double JobResult::*field) {
  double latest = 0;
  for (const JobResult& j : jobs) {
    if (j.ok) latest = std::max(latest, j.*field);
  }
  return latest;
}

// The stages in table and JSON order: a name for people, a key, the field.
struct Column {
  const char* title;
  const char* key;
  StageStats BreakdownRow::*stage;
};
const std::vector<Column>& Columns() {
  static const std::vector<Column> columns = {
      {"submit → received", "submit_to_received_ms", &BreakdownRow::submit_to_received},
      {"received → started", "received_to_started_ms", &BreakdownRow::received_to_started},
      {"started → first CUDA call", "started_to_first_cuda_ms",
       &BreakdownRow::started_to_first_cuda},
      {"first CUDA call → ready", "first_cuda_to_ready_ms", &BreakdownRow::first_cuda_to_ready},
      {"end → known", "end_to_known_ms", &BreakdownRow::end_to_known},
      {"first submit → last received", "first_submit_to_last_received_ms",
       &BreakdownRow::first_submit_to_last_received},
      {"first submit → last start", "first_submit_to_last_start_ms",
       &BreakdownRow::first_submit_to_last_start},
      {"last end → all known", "last_end_to_all_known_ms", &BreakdownRow::last_end_to_all_known},
      {"makespan", "makespan_ms", &BreakdownRow::makespan},
  };
  return columns;
}

std::string Cell(const StageStats& s) {
  if (s.count == 0) return "";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f / %.1f", s.median_ms, s.max_ms);
  return buf;
}

json StageJson(const StageStats& s) {
  if (s.count == 0) return {{"median", nullptr}, {"max", nullptr}, {"count", 0}};
  return {{"median", s.median_ms}, {"max", s.max_ms}, {"count", s.count}};
}

}  // namespace

std::vector<BreakdownRow> ComputeBreakdown(const std::vector<PointResult>& points,
                                           const std::vector<Mode>& modes) {
  std::vector<BreakdownRow> rows;
  for (const auto& [key, group] : MeasuredPointsByModeAndN(points, modes)) {
    BreakdownRow row;
    row.mode = group.front()->mode;
    row.n = key.second;
    row.reps = static_cast<int>(group.size());
    bool daemon = ThroughPinpoint(row.mode);  // the stages of submission and of the wait
    std::vector<double> submit, received, first_cuda, ready, known;
    std::vector<double> last_received, last_start, all_known, makespan;
    for (const PointResult* p : group) {
      const BatchResult& b = p->batch;
      for (const JobResult& j : b.jobs) {
        if (!j.ok) continue;
        ++row.jobs;
        if (daemon) {
          AddSpan(&submit, j.submit_call_s, j.submit_s);
          AddSpan(&received, j.submit_s, j.start_s);
          AddSpan(&known, j.end_s, j.known_s);
        }
        AddSpan(&first_cuda, j.start_s, j.first_cuda_s);
        AddSpan(&ready, j.first_cuda_s, j.ready_s);
      }
      if (daemon) AddSpan(&last_received, b.t0_s, Latest(b.jobs, &JobResult::submit_s));
      AddSpan(&last_start, b.t0_s, Latest(b.jobs, &JobResult::start_s));
      AddSpan(&all_known, Latest(b.jobs, &JobResult::end_s), b.t1_s);
      AddSpan(&makespan, b.t0_s, b.t1_s);
    }
    row.submit_to_received = Stats(submit);
    row.received_to_started = Stats(received);
    row.started_to_first_cuda = Stats(first_cuda);
    row.first_cuda_to_ready = Stats(ready);
    row.end_to_known = Stats(known);
    row.first_submit_to_last_received = Stats(last_received);
    row.first_submit_to_last_start = Stats(last_start);
    row.last_end_to_all_known = Stats(all_known);
    row.makespan = Stats(makespan);
    rows.push_back(row);
  }
  return rows;
}

std::string BreakdownMarkdown(const std::vector<BreakdownRow>& rows) {
  std::ostringstream md;
  md << "## Where the time goes\n\n"
     << "Median / max in ms. A copy's stages are over every copy that ended well, in every "
        "repetition: submit → received (the driver's `submit` to pinpointd's submit_ms), received "
        "→ started (start_ms), started → first CUDA call and first CUDA call → ready (from the "
        "copy's `pp-cuda` line; in direct modes from its spawn), end → known (end_ms to the wait "
        "reply that told the driver; one reply for the whole batch, so this includes waiting for "
        "the batch's last copy). A batch's stages are over the repetitions: from just before the "
        "first submission to the last copy received and started, and from the last end to the "
        "moment the driver knew of every end. Empty: the stage does not apply to the mode, or no "
        "copy reported it. All times are CLOCK_REALTIME; pinpointd stamps whole ms.\n\n";
  md << "| mode | N | reps |";
  for (const Column& c : Columns()) md << " " << c.title << " |";
  md << "\n|---|---:|---:|";
  for (size_t i = 0; i < Columns().size(); ++i) md << "---:|";
  md << "\n";
  for (const BreakdownRow& r : rows) {
    md << "| " << ModeName(r.mode) << " | " << r.n << " | " << r.reps << " |";
    for (const Column& c : Columns()) md << " " << Cell(r.*(c.stage)) << " |";
    md << "\n";
  }
  return md.str();
}

json BreakdownJson(const std::vector<BreakdownRow>& rows) {
  json out = json::array();
  for (const BreakdownRow& r : rows) {
    json stages = json::object();
    for (const Column& c : Columns()) stages[c.key] = StageJson(r.*(c.stage));
    out.push_back({{"mode", ModeName(r.mode)},
                   {"n", r.n},
                   {"reps", r.reps},
                   {"jobs", r.jobs},
                   {"stages", std::move(stages)}});
  }
  return out;
}

}  // namespace pinpoint::bench
