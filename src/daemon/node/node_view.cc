// Node's read-only views: the "gpus" listing and the Prometheus snapshot.
#include <algorithm>

#include "daemon/jobs/array_rest.h"
#include "daemon/node/node.h"

namespace pinpoint::daemon {

namespace {

const watch::GpuReading* ReadingOf(const watch::WatchView& view, int gpu_index) {
  for (const auto& r : view.gpus)
    if (r.gpu_index == gpu_index && r.ok) return &r;
  return nullptr;
}

// What the running jobs hold of one device, and the jobs shown on it.
struct DeviceUse {
  uint64_t mem_bytes = 0;
  int share_pct = 0;
  bool whole = false;
  std::optional<uint32_t> mps_uid;
  std::vector<DeviceJobView> jobs;
};

// Job `id`'s allocation `a` as the device shows it. Memory in use is per physical GPU (`gpu`):
// a MIG instance shows its job's use of the whole GPU.
DeviceJobView JobOnDevice(JobId id, const JobRecord& job, const Allocation& a, int gpu,
                          const watch::WatchView& view) {
  DeviceJobView entry;
  entry.id = id;
  entry.user = job.user;
  entry.name = job.request.name;
  entry.gpu_mem_bytes = a.gpu_mem_bytes;
  entry.gpu_share_pct = a.gpu_share_pct;
  entry.mode = a.mode;
  entry.energy_mj = job.usage.energy_mj;
  entry.gpu_mem_peak_bytes = job.usage.gpu_mem_peak_bytes;
  auto mem = view.job_mem_by_gpu.find(id);
  if (mem != view.job_mem_by_gpu.end()) {
    auto on = mem->second.find(gpu);
    if (on != mem->second.end()) entry.gpu_mem_used_bytes = on->second;
  }
  return entry;
}

// Each device's use by the running jobs, by device index; their host CPUs and memory into
// `host`. A suspended job uses no device (its GPUs are others'), and the device memory it keeps in
// host memory counts there, as admission counts it.
std::vector<DeviceUse> UsesOf(const JobTable& jobs, const sched::Inventory& devices,
                              const sharing::Backends& sharing, const watch::WatchView& view,
                              HostView& host) {
  std::vector<DeviceUse> use(devices.devices.size());
  for (const auto& [id, job] : jobs) {
    if (job.state != JobState::kRunning) continue;
    host.cpus_allocated += job.request.cpus;
    host.mem_allocated_bytes += job.request.mem_bytes + job.suspend.host_bytes;
    if (job.suspend.phase == SuspendPhase::kSuspended) continue;
    for (const auto& a : job.allocations) {
      if (a.device_index < 0 || static_cast<size_t>(a.device_index) >= use.size()) continue;
      DeviceUse& u = use[static_cast<size_t>(a.device_index)];
      u.mem_bytes += a.gpu_mem_bytes;
      u.share_pct += a.gpu_share_pct;
      if (sharing.For(a.mode).Rules().whole_device) u.whole = true;
      if (sharing.For(a.mode).Rules().one_user) u.mps_uid = job.uid;
      int gpu = devices.devices[static_cast<size_t>(a.device_index)].gpu_index;
      u.jobs.push_back(JobOnDevice(id, job, a, gpu, view));
    }
  }
  return use;
}

// The ended jobs' processes still on each device (WatchFeedback's holds), by device index.
std::map<int, std::vector<DeviceHoldView>> HoldsByDevice(
    const std::vector<WatchFeedback::Hold>& holds, const sched::Inventory& devices,
    UserDirectory& users) {
  std::map<int, std::vector<DeviceHoldView>> by_device;
  for (const WatchFeedback::Hold& h : holds) {
    for (int device : h.devices) {
      if (device < 0 || static_cast<size_t>(device) >= devices.devices.size()) continue;
      int gpu = devices.devices[static_cast<size_t>(device)].gpu_index;
      DeviceHoldView v{h.job,      NameOrUid(users, h.uid), {},       h.owned,
                       h.since_ms, h.deadline_ms,           h.killed, {}};
      for (const auto& [pid, on] : h.pids) {
        if (on != gpu) continue;
        v.pids.push_back(pid);
        if (std::count(h.unkillable.begin(), h.unkillable.end(), pid)) v.unkillable.push_back(pid);
      }
      if (!v.pids.empty()) by_device[device].push_back(std::move(v));
    }
  }
  return by_device;
}

// What device `d` is and what it has free, from its use.
DeviceView DeviceViewOf(const sched::Device& d, DeviceUse& u) {
  DeviceView dev;
  dev.index = d.index;
  dev.uuid = d.uuid;
  dev.name = d.name;
  dev.gpu_index = d.gpu_index;
  dev.is_mig = d.partition.is_mig();
  dev.mode = d.mode;
  dev.drained = d.drained;
  dev.mem_bytes = d.mem_bytes;
  dev.sm_count = d.sm_count;
  dev.mem_allocated_bytes = u.whole ? d.mem_bytes : u.mem_bytes;
  dev.mem_free_bytes = u.whole ? 0 : (d.mem_bytes > u.mem_bytes ? d.mem_bytes - u.mem_bytes : 0);
  dev.share_free_pct = u.whole ? 0 : 100 - u.share_pct;
  dev.jobs = std::move(u.jobs);
  if (d.partition.is_slot()) dev.mig_slot = MigSlotView{d.partition.start, d.partition.vacant};
  return dev;
}

}  // namespace

GpusReply Node::GpusView() const {
  watch::WatchView view;
  if (deps_.watcher != nullptr) view = deps_.watcher->Latest();
  GpusReply reply;
  std::vector<DeviceUse> use = UsesOf(jobs_, devices_, *sharing_, view, reply.host);
  std::map<int, std::vector<DeviceHoldView>> holds =
      HoldsByDevice(watch_.Holds(), devices_, *users_);
  std::map<int, sharing::ServerInfo> mps_daemons = sharing_->Servers();
  std::map<int, std::string> unkillable = watch_.Drained(*users_);
  for (const auto& d : devices_.devices) {
    DeviceUse& u = use[static_cast<size_t>(d.index)];
    DeviceView dev = DeviceViewOf(d, u);
    if (u.mps_uid) dev.mps_user = NameOrUid(*users_, *u.mps_uid);
    if (std::string why = faults_.DrainReason(d.index); !why.empty()) dev.drain_reason = why;
    if (auto held = unkillable.find(d.index); held != unkillable.end()) {
      dev.drained = true;
      if (!dev.drain_reason) dev.drain_reason = held->second;
    }
    dev.recovering = faults_.Recovering(d.index);
    if (auto mps = mps_daemons.find(d.index); mps != mps_daemons.end()) {
      const sharing::ServerInfo& m = mps->second;
      dev.mps = MpsDaemonView{m.running, m.uid, m.control_pid, m.clients, m.restarts, m.pipe_dir};
    }
    const watch::GpuReading* reading = ReadingOf(view, d.gpu_index);
    if (reading != nullptr && !d.partition.is_mig())
      dev.reading = GpuReadingView{reading->sample.mem_used_bytes, reading->sample.power_mw,
                                   reading->sample.energy_mj, reading->sample.utilization_pct};
    if (auto held = holds.find(d.index); held != holds.end()) dev.holds = std::move(held->second);
    reply.devices.push_back(std::move(dev));
  }
  if (deps_.mig != nullptr)
    for (const store::MigChange& c : deps_.mig->recent())
      reply.mig_changes.push_back({c.at_ms, c.gpu, partition::MigActionName(c.action), c.profile,
                                   c.start, c.instance_id, c.uuid, c.for_job, c.result});
  if (deps_.watcher != nullptr)
    reply.watcher = WatcherView{view.polls, view.poll_time_ms, view.last_poll_duration_us};
  reply.backend = options_.identity.backend_kind;
  reply.driver = options_.identity.driver_version;
  reply.simulated = options_.identity.simulated;
  reply.host.cpus = devices_.host.cpus;
  reply.host.mem_bytes = devices_.host.mem_bytes;
  return reply;
}

int64_t Node::generation() const {
  return watch_.generation() + jobs_.generation() +
         (deps_.watcher != nullptr ? deps_.watcher->Latest().polls : 0);
}

namespace {

// One series per physical GPU: a MIG GPU's memory is what its instances hold.
std::vector<metrics::GpuMetrics> GpuMetricsOf(const sched::Inventory& inventory,
                                              const watch::WatchView& view) {
  std::map<int, metrics::GpuMetrics> gpus;
  for (const auto& d : inventory.devices) {
    metrics::GpuMetrics& g = gpus[d.gpu_index];
    g.gpu_index = d.gpu_index;
    if (!d.partition.is_mig()) {
      g.uuid = d.uuid;
      g.name = d.name;
      g.mem_total_bytes = d.mem_bytes;
    } else {
      g.mem_total_bytes += d.mem_bytes;
    }
    if (const auto* r = ReadingOf(view, d.gpu_index)) {
      g.sampled = true;
      g.mem_used_bytes = r->sample.mem_used_bytes;
      g.utilization_pct = r->sample.utilization_pct;
      g.power_mw = r->sample.power_mw;
      g.energy_mj = r->sample.energy_mj;
    }
    auto acc = view.accounts.find(d.gpu_index);
    if (acc != view.accounts.end()) g.idle_energy_mj = acc->second.idle_energy_mj;
  }
  std::vector<metrics::GpuMetrics> out;
  for (auto& [index, g] : gpus) out.push_back(g);
  return out;
}

// Each job's series, the scheduler's counts, and what the running ones hold of each device.
void AddJobMetrics(const JobTable& jobs, const sched::Inventory& inventory,
                   const sharing::Backends& sharing, metrics::Snapshot& snap) {
  for (const auto& [id, job] : jobs) {
    metrics::JobMetrics j;
    j.id = id;
    j.user = job.user;
    j.state = JobStateName(job.state);
    j.kind = JobKindName(job.kind);
    j.gpu_mem_request_bytes = job.request.gpu_mem_bytes;
    j.usage = job.usage;
    if (job.kind == JobKind::kJob) j.qos = job.request.qos;
    snap.jobs.push_back(j);
    if (job.state == JobState::kPending)
      snap.sched.pending += static_cast<int>(jobs.TasksOf(id));  // a rest: its tasks
    if (job.kind == JobKind::kJob &&
        (job.state == JobState::kPending || job.state == JobState::kRunning))
      snap.sched.jobs_by_qos[{j.qos.empty() ? "-" : j.qos, j.state}] +=
          job.state == JobState::kPending ? static_cast<int>(jobs.TasksOf(id)) : 1;
    if (job.state != JobState::kRunning) continue;
    ++(job.kind == JobKind::kLease ? snap.sched.leases_running : snap.sched.running);
    if (job.suspend.phase == SuspendPhase::kSuspended) {  // its GPUs are others'
      ++snap.sched.suspended;
      snap.sched.suspended_host_bytes += job.suspend.host_bytes;
      continue;
    }
    for (const auto& a : job.allocations) {
      if (a.device_index < 0 || static_cast<size_t>(a.device_index) >= snap.devices.size())
        continue;
      metrics::DeviceMetrics& m = snap.devices[static_cast<size_t>(a.device_index)];
      m.slices += 1;
      const auto& d = inventory.devices[static_cast<size_t>(a.device_index)];
      bool whole = sharing.For(a.mode).Rules().whole_device;
      m.mem_allocated_bytes += whole ? d.mem_bytes : a.gpu_mem_bytes;
      m.share_allocated_pct += whole ? 100 : a.gpu_share_pct;
    }
  }
}

}  // namespace

metrics::Snapshot Node::MetricsView() const {
  metrics::Snapshot snap;
  watch::WatchView view;
  if (deps_.watcher != nullptr) view = deps_.watcher->Latest();
  snap.watcher_polls_total = view.polls;
  snap.watcher_last_poll_seconds = view.last_poll_duration_us / 1e6;
  if (deps_.mig != nullptr) {
    snap.mig = metrics::MigMetrics{};
    for (const auto& [action, n] : deps_.mig->made())
      snap.mig->changes_total[{partition::MigActionName(action), "ok"}] = n;
    for (const auto& [action, n] : deps_.mig->failed())
      snap.mig->changes_total[{partition::MigActionName(action), "failed"}] = n;
    snap.mig->instances = deps_.mig->InstanceCounts();
  }
  snap.gpus = GpuMetricsOf(devices_, view);
  snap.devices.resize(devices_.devices.size());
  std::map<int, sharing::ServerInfo> mps_daemons = sharing_->Servers();
  for (const auto& d : devices_.devices) {
    metrics::DeviceMetrics& m = snap.devices[static_cast<size_t>(d.index)];
    m.index = d.index;
    m.gpu_index = d.gpu_index;
    m.uuid = d.uuid;
    m.mode = d.mode;
    m.drained = d.drained;
    if (auto mps = mps_daemons.find(d.index); mps != mps_daemons.end()) {
      m.mps_up = mps->second.running;
      m.mps_user = NameOrUid(*users_, mps->second.uid);
    }
  }
  AddJobMetrics(jobs_, devices_, *sharing_, snap);
  snap.sched.starts_total = runner_.starts_total();
  snap.sched.preemptions_total = runner_.preemptions_total();
  for (const auto& [key, count] : ended_total_)
    snap.sched.ended_total[{JobStateName(key.first), ReasonName(key.second)}] += count;
  snap.sched.enforcement_disagreements_total = disagreements_total_;
  snap.sched.enforcement_overrides_total = overrides_total_;
  return snap;
}

}  // namespace pinpoint::daemon
