#include "bench/driver/report.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "bench/driver/breakdown.h"
#include "bench/driver/proc.h"
#include "common/file_util.h"
#include "pinpoint/units.h"

namespace pinpoint::bench {

namespace {

using nlohmann::json;

// A CSV number: "NaN" when unknown (below 0), which gnuplot and pandas both read as missing.
std::string Num(double v, const char* fmt = "%.6g") {
  if (v < 0 || !std::isfinite(v)) return "NaN";
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

// A table cell: "-" when unknown.
std::string Cell(double v, const char* fmt) {
  if (v < 0 || !std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

json JsonNum(double v) { return v < 0 || !std::isfinite(v) ? json(nullptr) : json(v); }

json MetricsJson(const PointMetrics& m) {
  return {{"ok_jobs", m.ok_jobs},
          {"failed_jobs", m.failed_jobs},
          {"makespan_s", JsonNum(m.makespan_s)},
          {"units", m.units},
          {"throughput", JsonNum(m.throughput)},
          {"jobs_per_min", JsonNum(m.jobs_per_min)},
          {"job_mean_s", JsonNum(m.job_mean_s)},
          {"job_p95_s", JsonNum(m.job_p95_s)},
          {"wait_mean_s", JsonNum(m.wait_mean_s)},
          {"energy_per_job_j", JsonNum(m.energy_per_job_j)},
          {"mean_power_w", JsonNum(m.mean_power_w)},
          {"utilization_pct", JsonNum(m.utilization_pct)}};
}

std::string Unit(const std::vector<SummaryRow>& rows) {
  for (const SummaryRow& r : rows) {
    if (!r.unit.empty()) return r.unit;
  }
  return "units";
}

// "GPU 0 GPU-abc" or "GPUs 0 GPU-abc, 1 GPU-def".
std::string GpusText(const RunMeta& meta) {
  if (meta.gpu_indices.size() <= 1) {
    return "GPU " + std::to_string(meta.gpu_index) + " " + meta.gpu_uuid;
  }
  std::string text = "GPUs ";
  for (size_t i = 0; i < meta.gpu_indices.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(meta.gpu_indices[i]) +
            (i < meta.gpu_uuids.size() ? " " + meta.gpu_uuids[i] : "");
  }
  return text;
}

}  // namespace

std::string MetaLine(const RunMeta& meta) {
  std::string gpus = meta.gpu_indices.size() > 1
                         ? std::to_string(meta.gpu_indices.size()) + " x " + meta.gpu_name
                         : meta.gpu_name;
  return gpus + ", driver " + meta.driver + ", CUDA " + meta.cuda + ", " +
         meta.date_utc.substr(0, 10);
}

json ResultsJson(const RunMeta& meta, const BenchOptions& options, const Workload& workload,
                 const std::vector<PointResult>& points) {
  json j;
  j["format"] = "pinpoint-bench/1";
  j["meta"] = {{"gpu_name", meta.gpu_name},
               {"gpu_uuid", meta.gpu_uuid},
               {"gpu_index", meta.gpu_index},
               {"gpu_indices",
                meta.gpu_indices.empty() ? std::vector<int>{meta.gpu_index} : meta.gpu_indices},
               {"gpu_uuids",
                meta.gpu_uuids.empty() ? std::vector<std::string>{meta.gpu_uuid} : meta.gpu_uuids},
               {"sm_count", meta.sm_count},
               {"gpu_mem_bytes", meta.gpu_mem_bytes},
               {"driver", meta.driver},
               {"cuda", meta.cuda},
               {"backend", meta.backend},
               {"date_utc", meta.date_utc},
               {"host_cpus", meta.host_cpus},
               {"pinpoint_version", meta.pinpoint_version},
               {"command_line", meta.command_line},
               {"interrupted", meta.interrupted},
               {"error", meta.error}};
  json modes = json::array();
  for (Mode m : options.modes) modes.push_back(ModeName(m));
  json n_for = json::object();
  for (const auto& [m, ns] : options.n_for) n_for[ModeName(m)] = ns;
  j["options"] = {{"workload", options.workload},
                  {"modes", modes},
                  {"n", options.n},
                  {"n_for", n_for},
                  {"reps", options.reps},
                  {"reps_at_1", RepsAt(options, 1)},
                  {"warmup", options.warmup},
                  {"gpu_share_pct", options.gpu_share_pct},
                  {"cpus", options.cpus},
                  {"cgroups", options.cgroups},
                  {"pin", options.pin},
                  {"budget_s", options.budget_s},
                  {"target_n", options.target_n},
                  {"sample_ms", options.sample_ms},
                  {"settle_ms", options.settle_ms},
                  {"daemon_set", options.daemon_set}};
  j["workload"] = {
      {"name", workload.name}, {"argv", workload.argv}, {"gpu_mem_bytes", workload.gpu_mem_bytes}};
  json pts = json::array();
  for (const PointResult& p : points) {
    json jobs = json::array();
    for (const JobResult& jr : p.batch.jobs) {
      jobs.push_back({{"submit_call_s", jr.submit_call_s},
                      {"submit_s", jr.submit_s},
                      {"start_s", jr.start_s},
                      {"first_cuda_s", jr.first_cuda_s},
                      {"ready_s", jr.ready_s},
                      {"end_s", jr.end_s},
                      {"known_s", jr.known_s},
                      {"ok", jr.ok},
                      {"units", jr.units},
                      {"unit", jr.unit},
                      {"own_seconds", jr.own_seconds},
                      {"device", jr.device},
                      {"detail", jr.detail}});
    }
    pts.push_back({{"mode", ModeName(p.mode)},
                   {"n", p.n},
                   {"rep", p.rep},
                   {"skipped", p.skipped},
                   {"error", p.error},
                   {"t0_s", p.batch.t0_s},
                   {"t1_s", p.batch.t1_s},
                   {"gpu",
                    {{"seconds", p.gpu.seconds},
                     {"energy_j", JsonNum(p.gpu.energy_j)},
                     {"energy_source", p.gpu.energy_source},
                     {"mean_power_w", JsonNum(p.gpu.mean_power_w)},
                     {"utilization_pct", JsonNum(p.gpu.utilization_pct)},
                     {"peak_mem_bytes", p.gpu.peak_mem_bytes},
                     {"samples", p.gpu.samples}}},
                   {"metrics", MetricsJson(ComputeMetrics(p))},
                   {"jobs", jobs}});
  }
  j["points"] = pts;
  std::vector<SummaryRow> rows = Summarize(points, options.modes);
  json summary = json::array();
  for (const SummaryRow& r : rows) {
    summary.push_back({{"mode", ModeName(r.mode)},
                       {"n", r.n},
                       {"reps", r.reps},
                       {"unit", r.unit},
                       {"failed_jobs", r.failed_jobs},
                       {"vs_exclusive", JsonNum(r.vs_exclusive)},
                       {"median", MetricsJson(r.median)}});
  }
  j["summary"] = summary;
  json targets = json::array();
  for (const TargetResult& t : EvaluateTargets(rows, options.target_n)) {
    targets.push_back({{"name", t.name},
                       {"known", t.known},
                       {"met", t.met},
                       {"info", t.info},
                       {"value", t.known ? json(t.value) : json(nullptr)},
                       {"detail", t.detail}});
  }
  j["targets"] = targets;
  j["breakdown"] = BreakdownJson(ComputeBreakdown(points, options.modes));
  return j;
}

std::string PointsCsv(const std::string& workload, const std::vector<PointResult>& points) {
  std::ostringstream out;
  out << "workload,mode,n,rep,status,ok_jobs,failed_jobs,makespan_s,units,throughput,jobs_per_min,"
         "job_mean_s,"
         "job_p95_s,wait_mean_s,energy_j,energy_per_job_j,mean_power_w,utilization_pct,peak_mem_"
         "bytes,"
         "energy_source\n";
  for (const PointResult& p : points) {
    PointMetrics m = ComputeMetrics(p);
    std::string status = p.skipped ? "skipped" : !p.error.empty() ? "error" : "ok";
    out << workload << ',' << ModeName(p.mode) << ',' << p.n << ',' << p.rep << ',' << status << ','
        << m.ok_jobs << ',' << m.failed_jobs << ',' << Num(m.makespan_s) << ',' << Num(m.units)
        << ',' << Num(m.throughput) << ',' << Num(m.jobs_per_min) << ',' << Num(m.job_mean_s) << ','
        << Num(m.job_p95_s) << ',' << Num(m.wait_mean_s) << ','
        << Num(status == "ok" ? p.gpu.energy_j : -1) << ',' << Num(m.energy_per_job_j) << ','
        << Num(m.mean_power_w) << ',' << Num(m.utilization_pct) << ',' << p.gpu.peak_mem_bytes
        << ',' << p.gpu.energy_source << '\n';
  }
  return out.str();
}

std::string SummaryCsv(const std::string& workload, const std::vector<SummaryRow>& rows) {
  std::ostringstream out;
  out << "workload,mode,n,reps,unit,throughput,vs_exclusive,jobs_per_min,job_mean_s,job_p95_s,wait_"
         "mean_s,"
         "makespan_s,energy_per_job_j,mean_power_w,utilization_pct,failed_jobs\n";
  for (const SummaryRow& r : rows) {
    const PointMetrics& m = r.median;
    out << workload << ',' << ModeName(r.mode) << ',' << r.n << ',' << r.reps << ','
        << (r.unit.empty() ? "units" : r.unit) << ',' << Num(m.throughput) << ','
        << Num(r.vs_exclusive) << ',' << Num(m.jobs_per_min) << ',' << Num(m.job_mean_s) << ','
        << Num(m.job_p95_s) << ',' << Num(m.wait_mean_s) << ',' << Num(m.makespan_s) << ','
        << Num(m.energy_per_job_j) << ',' << Num(m.mean_power_w) << ',' << Num(m.utilization_pct)
        << ',' << r.failed_jobs << '\n';
  }
  return out.str();
}

std::string Markdown(const RunMeta& meta, const BenchOptions& options,
                     const std::vector<PointResult>& points) {
  std::vector<SummaryRow> rows = Summarize(points, options.modes);
  std::string unit = Unit(rows);
  std::ostringstream md;
  md << "# pinpoint bench: " << options.workload << "\n\n";
  md << MetaLine(meta) << " (" << meta.date_utc << "); " << GpusText(meta) << ", " << meta.sm_count
     << " SMs, " << FormatSize(meta.gpu_mem_bytes) << (meta.gpu_indices.size() > 1 ? " each" : "")
     << "; " << meta.host_cpus << " host CPUs; pinpoint " << meta.pinpoint_version << ", backend "
     << meta.backend << ".\n\n";
  if (meta.gpu_indices.size() > 1) {
    if (options.pin) {
      md << "Copy i of a batch runs on GPU i mod " << meta.gpu_indices.size()
         << " in every mode (through pinpoint, submitted for that device: --pin), so N copies "
            "share "
         << meta.gpu_indices.size() << " GPUs; ";
    } else {
      md << "Through pinpoint the copies are submitted with no device named and pinpointd places "
            "them (its slice_placement; pinned to GPU i mod "
         << meta.gpu_indices.size()
         << " only where pinpointd has GPUs not measured). In the bare modes copy i of a batch "
            "runs on GPU i mod "
         << meta.gpu_indices.size() << ", an even split; ";
    }
    md << "exclusive runs one copy per GPU at a time, bare "
          "one copy on the first GPU, bare-mps one MPS control daemon per GPU. Energy, power and "
          "memory are the GPUs' sums, utilisation their mean.\n\n";
  }
  md << "One copy: `" << meta.workload_line << "`. Each copy asks for a slice of "
     << FormatSize(options.gpu_mem_bytes)
     << (options.gpu_share_pct > 0
             ? " and " + std::to_string(options.gpu_share_pct) + "% of the SMs"
             : "")
     << " and " << options.cpus << " host CPU" << (options.cpus == 1 ? "" : "s")
     << (options.cgroups ? " (cgroup limits on)" : " (cgroup limits off)") << ". Medians of "
     << options.reps << " repetition" << (options.reps == 1 ? "" : "s")
     << (RepsAt(options, 1) > options.reps ? " (" + std::to_string(RepsAt(options, 1)) + " at N=1)"
                                           : "")
     << (options.warmup ? ", after one untimed copy per mode" : "") << ".\n\n";
  if (!options.daemon_set.empty()) {
    md << "pinpointd settings changed from their defaults:";
    for (const std::string& kv : options.daemon_set) md << " `" << kv << "`";
    md << ".\n\n";
  }
  if (meta.interrupted)
    md << "**Interrupted: the table holds the points measured before the stop.**\n\n";
  if (!meta.error.empty()) md << "**Not everything ran: " << meta.error << "**\n\n";
  md << "Modes: `exclusive` = one job on the GPU at a time (a batch system's default), `timeslice` "
        "= N at once "
        "without MPS, `mps` = N at once as MPS slices (each through pinpointd); `bare-mps` = N "
        "copies started "
        "directly under an MPS daemon, no pinpoint; `bare` = one copy started directly.\n\n";
  md << "Throughput = work of the copies that ended well / makespan (from before the first "
        "submission to when the "
        "last end was seen). Job time = a copy's run time (start to end, queueing excluded); wait "
        "= time queued in "
        "pinpointd. Energy per job = the GPU's energy counter over the makespan / N (idle power "
        "included).\n\n";
  md << "| mode | N | reps | throughput (" << unit
     << "/s) | vs exclusive | jobs/min | job time mean (s) | "
        "job time p95 (s) | wait mean (s) | makespan (s) | energy/job (J) | mean power (W) | GPU "
        "util (%) | failed |\n";
  md << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const SummaryRow& r : rows) {
    const PointMetrics& m = r.median;
    md << "| " << ModeName(r.mode) << " | " << r.n << " | " << r.reps << " | "
       << Cell(m.throughput, "%.4g") << " | " << Cell(r.vs_exclusive, "%.2fx") << " | "
       << Cell(m.jobs_per_min, "%.1f") << " | " << Cell(m.job_mean_s, "%.3f") << " | "
       << Cell(m.job_p95_s, "%.3f") << " | " << Cell(m.wait_mean_s, "%.3f") << " | "
       << Cell(m.makespan_s, "%.3f") << " | " << Cell(m.energy_per_job_j, "%.1f") << " | "
       << Cell(m.mean_power_w, "%.0f") << " | " << Cell(m.utilization_pct, "%.0f") << " | "
       << r.failed_jobs << " |\n";
  }
  md << "\n## Targets\n\n| target | measured | result | from |\n|---|---:|---|---|\n";
  for (const TargetResult& t : EvaluateTargets(rows, options.target_n)) {
    md << "| " << t.name << " | " << (t.known ? t.measured : "-") << " | "
       << (!t.known ? "not measured"
           : t.info ? (t.met ? "within" : "over")
                    : (t.met ? "met" : "MISSED"))
       << " | " << t.detail << " |\n";
  }
  std::vector<BreakdownRow> breakdown = ComputeBreakdown(points, options.modes);
  if (!breakdown.empty()) md << "\n" << BreakdownMarkdown(breakdown);
  std::string skipped, errors;
  for (const PointResult& p : points) {
    std::string name = std::string(ModeName(p.mode)) + " N=" + std::to_string(p.n) + " rep " +
                       std::to_string(p.rep);
    if (p.skipped) skipped += (skipped.empty() ? "" : ", ") + name;
    if (!p.error.empty()) errors += "- " + name + ": " + p.error + "\n";
  }
  if (!skipped.empty())
    md << "\nNot run, to stay within the time budget of " << options.budget_s << " s: " << skipped
       << ".\n";
  if (!errors.empty()) md << "\nPoints that could not run:\n\n" << errors;
  std::string failures;
  int shown = 0;
  for (const PointResult& p : points) {
    for (const JobResult& j : p.batch.jobs) {
      if (!j.ok && shown < 5) {
        failures += "- " + std::string(ModeName(p.mode)) + " N=" + std::to_string(p.n) + ": " +
                    j.detail + "\n";
        ++shown;
      }
    }
  }
  if (!failures.empty()) md << "\nFailed copies (first " << shown << "):\n\n" << failures;
  md << "\nCommand: `" << meta.command_line << "`\n";
  return md.str();
}

Status WriteResults(const std::string& dir, const RunMeta& meta, const BenchOptions& options,
                    const Workload& workload, const std::vector<PointResult>& points) {
  PP_RETURN_IF_ERROR(MakeDirs(dir));
  std::vector<SummaryRow> rows = Summarize(points, options.modes);
  BenchOptions shown = options;
  shown.gpu_mem_bytes = workload.gpu_mem_bytes;
  PP_RETURN_IF_ERROR(WriteFileAtomic(dir + "/results.json",
                                     ResultsJson(meta, options, workload, points).dump(1) + "\n",
                                     0644, false));
  PP_RETURN_IF_ERROR(
      WriteFileAtomic(dir + "/points.csv", PointsCsv(options.workload, points), 0644, false));
  PP_RETURN_IF_ERROR(
      WriteFileAtomic(dir + "/summary.csv", SummaryCsv(options.workload, rows), 0644, false));
  PP_RETURN_IF_ERROR(
      WriteFileAtomic(dir + "/results.md", Markdown(meta, shown, points), 0644, false));
  PP_RETURN_IF_ERROR(WriteFileAtomic(dir + "/meta.txt", MetaLine(meta) + "\n", 0644, false));
  return Status::Ok();
}

}  // namespace pinpoint::bench
