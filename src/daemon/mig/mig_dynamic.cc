#include "daemon/mig/mig_dynamic.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>

#include "common/log.h"
#include "daemon/mig/mig_slots.h"

namespace pinpoint::daemon {

std::vector<sched::mig::Want> MigWants(const sched::Snapshot& snapshot, const sched::Plan& plan) {
  std::map<JobId, const sched::Demand*> demands;
  for (const sched::Demand& d : snapshot.pending) demands.emplace(d.id, &d);
  std::vector<sched::mig::Want> wants;
  for (const sched::Wait& wait : plan.waits) {
    if (wants.size() == kMigWantsPerPass) break;
    if (wait.reason != Reason::kResources && wait.reason != Reason::kMpsUser &&
        wait.reason != Reason::kReservation)
      continue;
    auto it = demands.find(wait.id);
    if (it == demands.end()) continue;
    const sched::Demand& d = *it->second;
    if (d.gpus == 1 && d.gpu_mem_bytes > 0 && d.devices.empty() && !d.isolated)
      wants.push_back({d.id, d.gpu_mem_bytes, d.mig_profile});
  }
  return wants;
}

std::map<int, int> JobsByDevice(const sched::Snapshot& snapshot) {
  std::map<int, int> jobs;
  for (const sched::RunningJob& job : snapshot.running)
    for (const sched::Slot& slot : job.slots) ++jobs[slot.device_index];
  return jobs;
}

MigDynamic::MigDynamic(std::vector<Gpu> gpus, gpu::GpuBackend* backend, store::JobStore* store,
                       Options options)
    : gpus_(std::move(gpus)), backend_(backend), store_(store), options_(options) {
  event_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

MigDynamic::~MigDynamic() {
  if (worker_.joinable()) worker_.join();
  if (event_fd_ >= 0) ::close(event_fd_);
}

Status MigDynamic::Resume(const std::vector<gpu::GpuInfo>& gpus, sched::Inventory& inventory,
                          int64_t now_ms) {
  if (event_fd_ < 0) return IoError("MIG: eventfd failed");
  if (store_ != nullptr) {
    Result<std::vector<store::MigChange>> changes =
        store_->RecentMigChanges(static_cast<int>(store::kMigChangesKept));
    if (!changes.ok()) return changes.status();
    for (const store::MigChange& c : *changes) {
      if (c.action == partition::MigAction::kCreate && c.result == "ok" && !c.uuid.empty())
        created_by_uuid_[c.uuid] = c.at_ms;
      if (recent_.size() == kRecentChanges) recent_.pop_front();
      recent_.push_back(c);
    }
  }
  return Adopt(gpus, inventory, now_ms);
}

Status MigDynamic::Adopt(const std::vector<gpu::GpuInfo>& gpus, sched::Inventory& inventory,
                         int64_t now_ms) {
  for (const Gpu& g : gpus_) {
    auto info = std::find_if(gpus.begin(), gpus.end(),
                             [&](const gpu::GpuInfo& i) { return i.index == g.index; });
    if (info == gpus.end())
      return Unavailable("MIG: GPU " + std::to_string(g.index) + " is gone from the driver's list");
    PP_RETURN_IF_ERROR(RefillMigSlots(inventory, *info, g.model, options_.mem_reserve));
    std::map<std::pair<int, int>, Instance> kept;
    for (const gpu::MigInfo& m : info->migs) {
      std::pair<int, int> key{g.index, m.placement_start};
      auto old = instances_.find(key);
      Instance inst;
      if (old != instances_.end() && old->second.uuid == m.uuid) {
        inst = old->second;
      } else {
        auto made = created_by_uuid_.find(m.uuid);
        inst.created_ms = made != created_by_uuid_.end() ? made->second : now_ms;
        inst.idle_since_ms = now_ms;
      }
      inst.uuid = m.uuid;
      inst.profile = m.profile;
      inst.id = m.gpu_instance_id;
      kept[key] = inst;
    }
    std::erase_if(instances_, [&](const auto& entry) { return entry.first.first == g.index; });
    instances_.merge(kept);
  }
  return Status::Ok();
}

std::map<std::pair<int, std::string>, int> MigDynamic::InstanceCounts() const {
  std::map<std::pair<int, std::string>, int> out;
  for (const auto& [key, inst] : instances_) ++out[{key.first, inst.profile}];
  return out;
}

int64_t MigDynamic::NextEligibleMs(int64_t now_ms) const {
  int64_t next = 0;
  for (const auto& [key, inst] : instances_) {
    int64_t at = std::max(inst.idle_since_ms + options_.plan.min_idle_ms,
                          inst.created_ms + options_.plan.min_lifetime_ms);
    if (at > now_ms && (next == 0 || at < next)) next = at;
  }
  return next;
}

void MigDynamic::NoteDrain(const std::optional<sched::mig::Drain>& drain,
                           const std::vector<sched::mig::Want>& wants, int64_t now_ms) {
  bool same = drain && drain_ && drain->for_job == drain_->for_job && drain->gpu == drain_->gpu &&
              drain->start == drain_->start && drain->profile == drain_->profile;
  std::vector<JobId> waiting;
  for (const sched::mig::Want& w : wants) waiting.push_back(w.id);
  drain_since_ms_ = drain_clock_.Drains(drain ? drain->for_job : 0, waiting, now_ms);
  if (drain && !same) {
    log::Info(
        "MIG: GPU {}: draining {} at memory slice {} for job {}; its slots take no new job from {} "
        "s on",
        drain->gpu, drain->profile, drain->start, drain->for_job, options_.drain_after_ms / 1000);
  }
  drain_ = drain;
  // The pass that holds the slots is due when the drain's wait is over.
  int64_t at = drain_since_ms_ + options_.drain_after_ms;
  if (drain_ && at > now_ms && (due_ms_ == 0 || at < due_ms_)) due_ms_ = at;
}

std::vector<int> MigDynamic::HeldDevices(const sched::Inventory& inventory, int64_t now_ms) const {
  if (!drain_ || now_ms - drain_since_ms_ < options_.drain_after_ms) return {};
  const Gpu* gpu = nullptr;
  for (const Gpu& g : gpus_)
    if (g.index == drain_->gpu) gpu = &g;
  if (gpu == nullptr || gpu->model.Find(drain_->profile) == nullptr) return {};
  partition::SliceRange drained = gpu->model.SlicesAt(drain_->profile, drain_->start);
  std::vector<int> held;
  for (const sched::Device& d : inventory.devices) {
    if (d.gpu_index != drain_->gpu || !d.partition.is_slot() || !d.partition.usable()) continue;
    int start = d.partition.start;
    auto inst = instances_.find({d.gpu_index, start});
    if (inst == instances_.end()) continue;
    bool overlaps = drained.Overlaps(gpu->model.SlicesAt(inst->second.profile, start));
    bool target = inst->second.profile == drain_->profile && start == drain_->start;
    if (overlaps && !target) held.push_back(d.index);
  }
  return held;
}

std::vector<int> MigDynamic::Plan(sched::Inventory& inventory,
                                  const std::vector<sched::mig::Want>& wants,
                                  const std::map<int, int>& jobs_by_device, int64_t now_ms,
                                  const std::set<int>& kept) {
  if (in_flight_ || gpus_.empty()) return {};
  std::map<std::pair<int, int>, int> device_of;
  for (const sched::Device& d : inventory.devices)
    if (d.partition.is_slot()) device_of[{d.gpu_index, d.partition.start}] = d.index;
  auto jobs_on = [&](const std::pair<int, int>& key) {
    auto dev = device_of.find(key);
    auto jobs = dev == device_of.end() ? jobs_by_device.end() : jobs_by_device.find(dev->second);
    return jobs == jobs_by_device.end() ? 0 : jobs->second;
  };
  for (auto& [key, inst] : instances_)
    if (jobs_on(key) > 0) inst.idle_since_ms = now_ms;
  if (now_ms < retry_after_ms_) {
    due_ms_ = retry_after_ms_;
    return {};
  }
  if (stale_) {  // a reconfiguration of nothing: the thread reads the layout
    StartThread({}, now_ms);
    return {};
  }
  std::vector<sched::mig::Gpu> layout;
  for (const Gpu& g : gpus_) {
    sched::mig::Gpu gpu{g.index, g.model};
    for (const auto& [key, inst] : instances_) {
      if (key.first != g.index) continue;
      auto dev = device_of.find(key);
      gpu.instances.push_back({static_cast<int>(inst.id), inst.profile, key.second, jobs_on(key),
                               inst.created_ms, inst.idle_since_ms,
                               dev != device_of.end() && kept.count(dev->second) > 0});
    }
    layout.push_back(std::move(gpu));
  }
  std::vector<sched::mig::Want> asked = wants;
  for (sched::mig::Want& w : asked)
    w.gpu_mem_bytes = options_.mem_reserve.Needed(w.gpu_mem_bytes);  // as the slots count it
  sched::mig::Plan plan = sched::mig::PlanLayout(layout, asked, now_ms, options_.plan);
  due_ms_ = plan.unserved.empty() && !plan.drain ? 0 : NextEligibleMs(now_ms);
  NoteDrain(plan.drain, wants, now_ms);
  if (plan.destroys.empty() && plan.creates.empty()) return {};

  std::vector<store::MigChange> changes;
  std::vector<int> vacated;
  // A destroy's reason: the waiting job whose drain or new instance needs its room.
  auto room_for = [&](int gpu) -> JobId {
    if (plan.drain && plan.drain->gpu == gpu) return plan.drain->for_job;
    for (const sched::mig::Create& c : plan.creates)
      if (c.gpu == gpu) return c.for_job;
    return 0;
  };
  for (const sched::mig::Destroy& d : plan.destroys) {
    auto inst = std::find_if(instances_.begin(), instances_.end(), [&](const auto& e) {
      return e.first.first == d.gpu && e.second.id == static_cast<uint32_t>(d.instance_id);
    });
    if (inst == instances_.end()) continue;
    store::MigChange c{now_ms,
                       d.gpu,
                       partition::MigAction::kDestroy,
                       inst->second.profile,
                       inst->first.second,
                       inst->second.id,
                       inst->second.uuid,
                       room_for(d.gpu),
                       ""};
    changes.push_back(c);
    auto dev = device_of.find(inst->first);
    if (dev != device_of.end()) {
      // No pass places a job there now.
      inventory.devices.at(static_cast<size_t>(dev->second)).partition.vacant = true;
      vacated.push_back(dev->second);
    }
  }
  for (const sched::mig::Create& c : plan.creates)
    changes.push_back(store::MigChange{now_ms, c.gpu, partition::MigAction::kCreate, c.profile,
                                       c.start, 0, "", c.for_job, ""});
  for (const store::MigChange& c : changes)
    log::Info("MIG: GPU {}: {} {} at memory slice {}{}", c.gpu,
              c.action == partition::MigAction::kCreate ? "making" : "destroying", c.profile,
              c.start, c.for_job != 0 ? " for job " + std::to_string(c.for_job) : std::string());
  StartThread(std::move(changes), now_ms);
  return vacated;
}

void MigDynamic::StartThread(std::vector<store::MigChange> changes, int64_t now_ms) {
  in_flight_ = true;
  started_ms_ = now_ms;
  overdue_ = false;
  done_.store(false);
  outcome_.reset();
  worker_ = std::thread(&MigDynamic::Run, this, std::move(changes));
}

void MigDynamic::Run(std::vector<store::MigChange> changes) {
  auto out = std::make_unique<Outcome>();
  for (store::MigChange& c : changes) {
    if (c.action == partition::MigAction::kDestroy) {
      Status s = backend_->DestroyMigInstance(c.gpu, c.instance_id);
      c.result = s.ok() ? "ok" : s.message();
    } else {
      Result<gpu::MigInfo> made = backend_->CreateMigInstance(c.gpu, c.profile, c.start);
      c.result = made.ok() ? "ok" : made.status().message();
      if (made.ok()) {
        c.instance_id = made->gpu_instance_id;
        c.uuid = made->uuid;
      }
    }
  }
  out->changes = std::move(changes);
  out->layout = backend_->Inventory();
  outcome_ = std::move(out);
  done_.store(true, std::memory_order_release);
  uint64_t one = 1;
  if (::write(event_fd_, &one, sizeof(one)) != sizeof(one)) {
    // The loop still finds done_ at its next pass.
  }
}

bool MigDynamic::Poll(sched::Inventory& inventory, int64_t now_ms) {
  if (!in_flight_) return false;
  if (!done_.load(std::memory_order_acquire)) {
    if (!overdue_ && now_ms - started_ms_ > options_.deadline_ms) {
      overdue_ = true;
      log::Warn(
          "MIG: a reconfiguration has run for {} s: the driver has not answered; no other starts "
          "until it does",
          (now_ms - started_ms_) / 1000);
    }
    return false;
  }
  worker_.join();
  uint64_t count = 0;
  while (::read(event_fd_, &count, sizeof(count)) == sizeof(count)) {
  }
  in_flight_ = false;
  overdue_ = false;
  std::unique_ptr<Outcome> out = std::move(outcome_);
  bool failed = false;
  for (const store::MigChange& c : out->changes) {
    bool ok = c.result == "ok";
    failed = failed || !ok;
    ++(ok ? made_ : failed_)[c.action];
    if (ok && c.action == partition::MigAction::kCreate) created_by_uuid_[c.uuid] = c.at_ms;
    if (ok)
      log::Info("MIG: GPU {}: {} {} at memory slice {} (GPU instance {}, {})", c.gpu,
                c.action == partition::MigAction::kCreate ? "made" : "destroyed", c.profile,
                c.start, c.instance_id, c.uuid);
    else
      log::Warn("MIG: GPU {}: {} {} at memory slice {} failed: {}", c.gpu,
                partition::MigActionName(c.action), c.profile, c.start, c.result);
    if (recent_.size() == kRecentChanges) recent_.pop_front();
    recent_.push_back(c);
  }
  if (store_ != nullptr) {
    Status s = store_->AppendMigChanges(out->changes);
    if (!s.ok())
      log::Error("MIG: recording {} layout changes: {}", out->changes.size(), s.message());
  }
  Status adopted = out->layout.ok() ? Adopt(*out->layout, inventory, now_ms) : out->layout.status();
  if (!adopted.ok()) {
    // The slots stay as the plan left them (those it destroyed vacant) until a later read works.
    log::Error("MIG: reading the layout after a reconfiguration: {}", adopted.message());
    failed = true;
  }
  stale_ = !adopted.ok();
  if (failed) {
    retry_after_ms_ = now_ms + options_.retry_ms;
    due_ms_ = retry_after_ms_;
  }
  return true;
}

}  // namespace pinpoint::daemon
