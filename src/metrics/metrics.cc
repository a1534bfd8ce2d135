#include "metrics/metrics.h"

#include <fmt/format.h>

#include <functional>

namespace pinpoint::metrics {

std::string EscapeLabel(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Writer {
 public:
  // Starts a metric family: HELP and TYPE lines, once.
  void Family(const char* name, const char* type, const char* help) {
    fmt::format_to(std::back_inserter(out_), "# HELP {} {}\n# TYPE {} {}\n", name, help, name,
                   type);
    name_ = name;
  }
  void Sample(const Labels& labels, double value) {
    out_ += name_;
    if (!labels.empty()) {
      out_ += '{';
      for (size_t i = 0; i < labels.size(); ++i) {
        if (i > 0) out_ += ',';
        fmt::format_to(std::back_inserter(out_), "{}=\"{}\"", labels[i].first,
                       EscapeLabel(labels[i].second));
      }
      out_ += '}';
    }
    fmt::format_to(std::back_inserter(out_), " {}\n", value);
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
  std::string name_;
};

Labels GpuLabels(const GpuMetrics& g) {
  return {{"gpu", std::to_string(g.gpu_index)}, {"uuid", g.uuid}, {"name", g.name}};
}

Labels DeviceLabels(const DeviceMetrics& d) {
  return {{"device", std::to_string(d.index)},
          {"gpu", std::to_string(d.gpu_index)},
          {"uuid", d.uuid},
          {"mode", SharingModeName(d.mode)}};
}

Labels JobLabels(const JobMetrics& j) { return {{"job", std::to_string(j.id)}, {"user", j.user}}; }

template <typename T>
void Each(Writer& w, const std::vector<T>& items, const std::function<bool(const T&)>& keep,
          const std::function<Labels(const T&)>& labels,
          const std::function<double(const T&)>& value) {
  for (const T& item : items)
    if (keep(item)) w.Sample(labels(item), value(item));
}

void RenderGpus(Writer& w, const std::vector<GpuMetrics>& gpus) {
  auto sampled = [](const GpuMetrics& g) { return g.sampled; };
  auto always = [](const GpuMetrics&) { return true; };
  w.Family("pinpoint_gpu_up", "gauge",
           "1 when the last watcher poll read the GPU, 0 when it failed.");
  Each<GpuMetrics>(w, gpus, always, GpuLabels,
                   [](const GpuMetrics& g) { return g.sampled ? 1.0 : 0.0; });
  w.Family("pinpoint_gpu_memory_used_bytes", "gauge", "Device memory in use on the GPU.");
  Each<GpuMetrics>(w, gpus, sampled, GpuLabels,
                   [](const GpuMetrics& g) { return double(g.mem_used_bytes); });
  w.Family("pinpoint_gpu_memory_total_bytes", "gauge", "Device memory of the GPU.");
  Each<GpuMetrics>(w, gpus, always, GpuLabels,
                   [](const GpuMetrics& g) { return double(g.mem_total_bytes); });
  w.Family("pinpoint_gpu_utilization_ratio", "gauge",
           "GPU utilisation over the driver's last sample period, 0 to 1.");
  Each<GpuMetrics>(
      w, gpus, [](const GpuMetrics& g) { return g.sampled && g.utilization_pct >= 0; }, GpuLabels,
      [](const GpuMetrics& g) { return g.utilization_pct / 100.0; });
  w.Family("pinpoint_gpu_power_watts", "gauge", "Power draw of the GPU.");
  Each<GpuMetrics>(w, gpus, sampled, GpuLabels,
                   [](const GpuMetrics& g) { return g.power_mw / 1000.0; });
  w.Family("pinpoint_gpu_energy_joules_total", "counter",
           "The GPU's energy counter since the driver loaded.");
  Each<GpuMetrics>(
      w, gpus, [](const GpuMetrics& g) { return g.sampled && g.energy_mj > 0; }, GpuLabels,
      [](const GpuMetrics& g) { return g.energy_mj / 1000.0; });
  w.Family("pinpoint_gpu_idle_energy_joules_total", "counter",
           "Energy the GPU used while no job was on it, since pinpointd started.");
  Each<GpuMetrics>(w, gpus, always, GpuLabels,
                   [](const GpuMetrics& g) { return g.idle_energy_mj / 1000.0; });
}

void RenderDevices(Writer& w, const std::vector<DeviceMetrics>& devices) {
  auto always = [](const DeviceMetrics&) { return true; };
  w.Family("pinpoint_device_slices", "gauge",
           "Running jobs holding a slice of (or all of) the device.");
  Each<DeviceMetrics>(w, devices, always, DeviceLabels,
                      [](const DeviceMetrics& d) { return double(d.slices); });
  w.Family("pinpoint_device_memory_allocated_bytes", "gauge",
           "Device memory allocated to running jobs.");
  Each<DeviceMetrics>(w, devices, always, DeviceLabels,
                      [](const DeviceMetrics& d) { return double(d.mem_allocated_bytes); });
  w.Family("pinpoint_device_share_allocated_ratio", "gauge",
           "SM share allocated to running jobs, 0 to 1.");
  Each<DeviceMetrics>(w, devices, always, DeviceLabels,
                      [](const DeviceMetrics& d) { return d.share_allocated_pct / 100.0; });
  w.Family("pinpoint_device_drained", "gauge", "1 when the device takes no new jobs.");
  Each<DeviceMetrics>(w, devices, always, DeviceLabels,
                      [](const DeviceMetrics& d) { return d.drained ? 1.0 : 0.0; });
  w.Family("pinpoint_mps_server_up", "gauge",
           "1 when the device's MPS control daemon runs, 0 when it died; absent without one.");
  Each<DeviceMetrics>(
      w, devices, [](const DeviceMetrics& d) { return d.mps_up.has_value(); },
      [](const DeviceMetrics& d) {
        Labels l = DeviceLabels(d);
        l.emplace_back("user", d.mps_user);
        return l;
      },
      [](const DeviceMetrics& d) { return d.mps_up.value_or(false) ? 1.0 : 0.0; });
}

void RenderJobs(Writer& w, const std::vector<JobMetrics>& jobs) {
  auto running = [](const JobMetrics& j) { return j.state == "running"; };
  auto seen = [](const JobMetrics& j) { return j.usage.samples > 0; };
  w.Family("pinpoint_job_state", "gauge",
           "1 for each active job or lease, labelled with its state and kind.");
  Each<JobMetrics>(
      w, jobs, [](const JobMetrics&) { return true; },
      [](const JobMetrics& j) {
        Labels l = JobLabels(j);
        l.emplace_back("state", j.state);
        l.emplace_back("kind", j.kind);
        if (!j.qos.empty()) l.emplace_back("qos", j.qos);
        return l;
      },
      [](const JobMetrics&) { return 1.0; });
  w.Family("pinpoint_job_gpu_memory_request_bytes", "gauge",
           "Device memory the job asked for per device; 0 for whole GPUs.");
  Each<JobMetrics>(w, jobs, running, JobLabels,
                   [](const JobMetrics& j) { return double(j.gpu_mem_request_bytes); });
  w.Family("pinpoint_job_gpu_memory_bytes", "gauge",
           "Device memory of all the job's processes on its busiest GPU at the last poll, contexts "
           "included.");
  Each<JobMetrics>(w, jobs, seen, JobLabels,
                   [](const JobMetrics& j) { return double(j.usage.gpu_mem_now_bytes); });
  w.Family("pinpoint_job_gpu_memory_peak_bytes", "gauge",
           "Highest device memory of the job on one GPU so far.");
  Each<JobMetrics>(w, jobs, seen, JobLabels,
                   [](const JobMetrics& j) { return double(j.usage.gpu_mem_peak_bytes); });
  w.Family("pinpoint_job_energy_joules_total", "counter",
           "The job's part of its GPUs' energy (docs/accounting.md).");
  Each<JobMetrics>(w, jobs, seen, JobLabels,
                   [](const JobMetrics& j) { return j.usage.energy_mj / 1000.0; });
}

void RenderSched(Writer& w, const SchedMetrics& s) {
  w.Family("pinpoint_queue_length", "gauge", "Pending jobs.");
  w.Sample({}, s.pending);
  w.Family("pinpoint_jobs_running", "gauge", "Running jobs (leases not counted).");
  w.Sample({}, s.running);
  w.Family("pinpoint_qos_jobs", "gauge",
           "Pending and running jobs by service class (submit --qos) and state.");
  for (const auto& [key, count] : s.jobs_by_qos)
    w.Sample({{"qos", key.first}, {"state", key.second}}, count);
  w.Family("pinpoint_leases_running", "gauge", "Open leases: slices held for containers.");
  w.Sample({}, s.leases_running);
  w.Family("pinpoint_jobs_suspended", "gauge",
           "Running jobs suspended (pinpoint suspend, or a preemption's): their GPUs free for "
           "others.");
  w.Sample({}, s.suspended);
  w.Family("pinpoint_jobs_suspended_host_memory_bytes", "gauge",
           "Device memory the suspended jobs keep in host memory.");
  w.Sample({}, static_cast<double>(s.suspended_host_bytes));
  w.Family("pinpoint_job_starts_total", "counter", "Jobs started since pinpointd started.");
  w.Sample({}, static_cast<double>(s.starts_total));
  w.Family("pinpoint_preemptions_total", "counter",
           "Running jobs preempted (requeued, suspended or cancelled) to make room for a waiting "
           "job of a class that may preempt theirs, since pinpointd started.");
  w.Sample({}, static_cast<double>(s.preemptions_total));
  w.Family("pinpoint_jobs_ended_total", "counter",
           "Jobs that reached a final state since pinpointd started, by state and reason.");
  for (const auto& [key, count] : s.ended_total)
    w.Sample({{"state", key.first}, {"reason", key.second}}, static_cast<double>(count));
  w.Family("pinpoint_enforcement_disagreements_total", "counter",
           "Ended jobs' resources whose applied limit, read back from the system, was not what "
           "the job asked for (docs/enforcement.md), by resource.");
  // Every resource has a series from the start, so that a rate over it is defined.
  std::map<std::string, int64_t> counts = s.enforcement_disagreements_total;
  for (const char* resource :
       {"devices", "gpu_mem", "gpu_share", "gpu_priority", "cpus", "mem", "time"})
    counts.emplace(resource, 0);
  for (const auto& [resource, count] : counts)
    w.Sample({{"resource", resource}}, static_cast<double>(count));
  w.Family("pinpoint_enforcement_overrides_total", "counter",
           "Ended jobs' resources that a process of the job ran with other limits than it was "
           "given (the job's own doing; docs/enforcement.md), by resource.");
  std::map<std::string, int64_t> overrides = s.enforcement_overrides_total;
  for (const char* resource : {"devices", "gpu_mem", "gpu_share", "gpu_priority"})
    overrides.emplace(resource, 0);
  for (const auto& [resource, count] : overrides)
    w.Sample({{"resource", resource}}, static_cast<double>(count));
}

}  // namespace

std::string Render(const Snapshot& snapshot) {
  Writer w;
  RenderGpus(w, snapshot.gpus);
  RenderDevices(w, snapshot.devices);
  RenderJobs(w, snapshot.jobs);
  RenderSched(w, snapshot.sched);
  w.Family("pinpoint_watcher_polls_total", "counter", "GPU polls done by the watcher.");
  w.Sample({}, static_cast<double>(snapshot.watcher_polls_total));
  w.Family("pinpoint_watcher_last_poll_seconds", "gauge", "How long the watcher's last poll took.");
  w.Sample({}, snapshot.watcher_last_poll_seconds);
  w.Family("pinpoint_jobs_purged_total", "counter",
           "Ended jobs deleted by retention, with their directories.");
  w.Sample({}, static_cast<double>(snapshot.jobs_purged_total));
  if (snapshot.mig) {
    w.Family("pinpoint_mig_changes_total", "counter",
             "MIG instances pinpoint made (create) or destroyed (destroy) on mig-dynamic GPUs, by "
             "result.");
    for (const auto& [key, count] : snapshot.mig->changes_total)
      w.Sample({{"action", key.first}, {"result", key.second}}, static_cast<double>(count));
    w.Family("pinpoint_mig_instances", "gauge",
             "MIG instances on mig-dynamic GPUs now, by profile.");
    for (const auto& [key, count] : snapshot.mig->instances)
      w.Sample({{"gpu", std::to_string(key.first)}, {"profile", key.second}}, count);
  }
  return w.Take();
}

}  // namespace pinpoint::metrics
