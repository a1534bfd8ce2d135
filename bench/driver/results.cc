#include "bench/driver/results.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace pinpoint::bench {

namespace {

std::string Format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

const SummaryRow* Find(const std::vector<SummaryRow>& rows, Mode mode, int n) {
  for (const SummaryRow& r : rows) {
    if (r.mode == mode && r.n == n) return &r;
  }
  return nullptr;
}

// Median of one field over the repetitions, ignoring unknown (negative) values.
double MedianOf(const std::vector<PointMetrics>& ms, double PointMetrics::*field) {
  std::vector<double> v;
  for (const PointMetrics& m : ms) {
    if (m.*field >= 0) v.push_back(m.*field);
  }
  return Median(v);
}

}  // namespace

double Median(std::vector<double> values) {
  if (values.empty()) return -1;
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

double Percentile(std::vector<double> values, double pct) {
  if (values.empty()) return -1;
  std::sort(values.begin(), values.end());
  double rank = std::ceil(pct / 100.0 * static_cast<double>(values.size()));
  size_t i = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return values[std::min(i, values.size() - 1)];
}

PointMetrics ComputeMetrics(const PointResult& point) {
  PointMetrics m;
  if (point.skipped || !point.error.empty()) return m;
  const BatchResult& b = point.batch;
  std::vector<double> run, wait;
  for (const JobResult& j : b.jobs) {
    if (!j.ok) {
      ++m.failed_jobs;
      continue;
    }
    ++m.ok_jobs;
    m.units += j.units;
    if (j.end_s > 0 && j.start_s > 0) run.push_back(j.end_s - j.start_s);
    if (j.start_s > 0 && j.submit_s > 0) wait.push_back(std::max(0.0, j.start_s - j.submit_s));
  }
  m.makespan_s = b.t1_s - b.t0_s;
  if (m.makespan_s > 0) {
    m.throughput = m.units / m.makespan_s;
    m.jobs_per_min = 60.0 * m.ok_jobs / m.makespan_s;
  }
  if (!run.empty()) {
    double sum = 0;
    for (double r : run) sum += r;
    m.job_mean_s = sum / static_cast<double>(run.size());
    m.job_p95_s = Percentile(run, 95);
  }
  if (!wait.empty()) {
    double sum = 0;
    for (double w : wait) sum += w;
    m.wait_mean_s = sum / static_cast<double>(wait.size());
  }
  if (point.gpu.energy_j >= 0 && point.n > 0) m.energy_per_job_j = point.gpu.energy_j / point.n;
  m.mean_power_w = point.gpu.mean_power_w;
  m.utilization_pct = point.gpu.utilization_pct;
  return m;
}

std::map<std::pair<int, int>, std::vector<const PointResult*>> MeasuredPointsByModeAndN(
    const std::vector<PointResult>& points, const std::vector<Mode>& modes) {
  std::map<std::pair<int, int>, std::vector<const PointResult*>> groups;
  for (const PointResult& p : points) {
    if (p.skipped || !p.error.empty()) continue;
    int order = static_cast<int>(std::find(modes.begin(), modes.end(), p.mode) - modes.begin());
    groups[{order, p.n}].push_back(&p);
  }
  return groups;
}

std::vector<SummaryRow> Summarize(const std::vector<PointResult>& points,
                                  const std::vector<Mode>& modes) {
  std::vector<SummaryRow> rows;
  for (const auto& [key, group] : MeasuredPointsByModeAndN(points, modes)) {
    SummaryRow row;
    row.mode = group.front()->mode;
    row.n = key.second;
    std::vector<PointMetrics> ms;
    for (const PointResult* p : group) {
      PointMetrics m = ComputeMetrics(*p);
      row.failed_jobs += m.failed_jobs;
      ms.push_back(m);
      for (const JobResult& j : p->batch.jobs) {
        if (row.unit.empty() && j.ok) row.unit = j.unit;
      }
    }
    if (ms.empty()) continue;
    row.reps = static_cast<int>(ms.size());
    PointMetrics& md = row.median;
    md.ok_jobs = ms.front().ok_jobs;
    md.failed_jobs = row.failed_jobs;
    md.makespan_s = MedianOf(ms, &PointMetrics::makespan_s);
    md.units = MedianOf(ms, &PointMetrics::units);
    md.throughput = MedianOf(ms, &PointMetrics::throughput);
    md.jobs_per_min = MedianOf(ms, &PointMetrics::jobs_per_min);
    md.job_mean_s = MedianOf(ms, &PointMetrics::job_mean_s);
    md.job_p95_s = MedianOf(ms, &PointMetrics::job_p95_s);
    md.wait_mean_s = MedianOf(ms, &PointMetrics::wait_mean_s);
    md.energy_per_job_j = MedianOf(ms, &PointMetrics::energy_per_job_j);
    md.mean_power_w = MedianOf(ms, &PointMetrics::mean_power_w);
    md.utilization_pct = MedianOf(ms, &PointMetrics::utilization_pct);
    rows.push_back(row);
  }
  for (SummaryRow& r : rows) {
    const SummaryRow* ex = Find(rows, Mode::kExclusive, r.n);
    if (ex != nullptr && ex->median.throughput > 0 && r.median.throughput >= 0) {
      r.vs_exclusive = r.median.throughput / ex->median.throughput;
    }
  }
  return rows;
}

std::vector<TargetResult> EvaluateTargets(const std::vector<SummaryRow>& rows, int target_n) {
  std::vector<TargetResult> out;
  std::string at = " (N=" + std::to_string(target_n) + ")";
  const SummaryRow* mps = Find(rows, Mode::kMps, target_n);
  const SummaryRow* ex = Find(rows, Mode::kExclusive, target_n);
  const SummaryRow* bare_mps = Find(rows, Mode::kBareMps, target_n);

  auto ratio = [&](const std::string& name, const SummaryRow* a, const SummaryRow* b,
                   double PointMetrics::*field, double goal, bool percent, const char* unit) {
    TargetResult t;
    t.name = name;
    if (a != nullptr && b != nullptr && a->median.*field > 0 && b->median.*field > 0) {
      t.known = true;
      t.value = a->median.*field / b->median.*field;
      t.met = t.value >= goal;
      t.measured = percent ? Format("%.0f%%", 100 * t.value) : Format("%.2fx", t.value);
      t.detail = std::string(ModeName(a->mode)) + " " + Format("%.4g", a->median.*field) + " " +
                 unit + ", " + ModeName(b->mode) + " " + Format("%.4g", b->median.*field) + " " +
                 unit;
    }
    out.push_back(t);
  };
  ratio("mps throughput >= 5x exclusive" + at, mps, ex, &PointMetrics::throughput, 5.0, false,
        "units/s");
  ratio("mps throughput >= 90% of bare-mps" + at, mps, bare_mps, &PointMetrics::throughput, 0.9,
        true, "units/s");
  ratio("energy per job in exclusive >= 4x mps" + at, ex, mps, &PointMetrics::energy_per_job_j, 4.0,
        false, "J");

  auto overhead = [&](const std::string& name, Mode through, Mode direct, bool info) {
    TargetResult t;
    t.name = name;
    t.info = info;
    const SummaryRow* a = Find(rows, through, 1);
    const SummaryRow* b = Find(rows, direct, 1);
    if (a != nullptr && b != nullptr && a->median.makespan_s > 0 && b->median.makespan_s > 0) {
      t.known = true;
      t.value = a->median.makespan_s / b->median.makespan_s - 1;
      t.met = t.value <= 0.03;
      t.measured = Format("%+.1f%%", 100 * t.value);
      t.detail = std::string(ModeName(through)) + " " + Format("%.3f", a->median.makespan_s) +
                 " s, " + ModeName(direct) + " " + Format("%.3f", b->median.makespan_s) +
                 " s (submit to end seen)";
    }
    out.push_back(t);
  };
  overhead("one job under pinpoint (exclusive) within 3% of bare (N=1)", Mode::kExclusive,
           Mode::kBare, false);
  overhead("one job under pinpoint (mps) within 3% of bare-mps (N=1)", Mode::kMps, Mode::kBareMps,
           true);
  return out;
}

}  // namespace pinpoint::bench
