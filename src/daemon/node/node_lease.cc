// Node's leases (node.h, docs/containers.md): slices held for processes pinpointd did not start.
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>

#include "common/file_util.h"
#include "common/log.h"
#include "daemon/jobs/lifecycle.h"
#include "daemon/jobs/sched_view.h"
#include "daemon/node/lease_edits.h"
#include "daemon/node/node.h"
#include "pinpoint/escape.h"

namespace pinpoint::daemon {

namespace {

// The lease's resources as a JobRequest: no command, no host CPU or memory of pinpoint's (the
// container runtime limits those).
JobRequest LeaseJobRequest(const LeaseRequest& lease) {
  JobRequest r;
  r.name = lease.name;
  r.gpus = lease.gpus;
  r.gpu_mem_bytes = lease.gpu_mem_bytes;
  r.gpu_share_pct = lease.gpu_share_pct;
  r.cpus = 0;
  r.priority = lease.priority;
  r.time_limit_s = lease.time_limit_s;
  r.as_user = lease.as_user;
  r.devices = lease.devices;
  return r;
}

// JobRequest's rules for what a lease has of a request.
Status ValidateLease(const LeaseRequest& lease) {
  if (lease.gpus < 1) return InvalidArgument("a lease needs at least one GPU (gpus >= 1)");
  JobRequest check = LeaseJobRequest(lease);
  check.argv = {"lease"};
  check.cwd = "/";
  check.cpus = 1;
  return ValidateRequest(check);
}

}  // namespace

Result<Node::OpenedLease> Node::OpenLease(const api::Caller& caller, const LeaseRequest& request) {
  PP_RETURN_IF_ERROR(ValidateLease(request));
  JobRequest job_request = LeaseJobRequest(request);
  PP_RETURN_IF_ERROR(admission_.ResolveTimeLimit(job_request.time_limit_s));
  auto admitted = admission_.Admit(caller, std::move(job_request), jobs_);
  if (!admitted.ok()) return admitted.status();
  JobRecord r = std::move(admitted).value();
  r.kind = JobKind::kLease;
  lifecycle::Submitted(r, deps_.clock->NowMs());
  auto id = deps_.store->Insert(r, std::nullopt);
  if (!id.ok()) return id.status();
  r.id = *id;
  JobRecord& lease = jobs_.Add(std::move(r));
  // Placed now or never (a container does not wait in the queue), alone: no other job is started
  // inside this request, and the last pass's reservation is kept. The waiting jobs count as in a
  // pass for the empty GPUs (keep_empty_gpus, the users' fair shares): a lease is no way around
  // them.
  std::optional<sched::Reservation> held = reservation_;
  if (held) {
    auto waiting = jobs_.find(held->id);
    if (waiting == jobs_.end() || waiting->second.state != JobState::kPending) held.reset();
  }
  sched::Snapshot snap = SchedSnapshot(/*with_pending=*/true);
  snap.dependencies = dependencies_.StatesFor(snap.pending);
  auto placement = sched::PlaceOne(snap, DemandOf(lease), held);
  bool placed = false;
  if (auto* start = std::get_if<sched::Start>(&placement)) {
    placed = !runner_.Start({*start}).empty();
    dirty_ = true;  // what it took changes the waits of the pending jobs
  } else {
    const sched::Wait& wait = std::get<sched::Wait>(placement);
    lifecycle::Waiting(lease, wait.reason, WaitDetail(wait, *users_, watch_.HoldsNote(*users_)));
  }
  if (lease.state == JobState::kRunning) return OpenedLease{lease, EditsOfLease(lease.id)};
  std::string why = lifecycle::Why(lease);
  if (IsFinal(lease.state))
    return Unavailable("lease " + std::to_string(lease.id) + " could not start: " + why);
  if (placed && lease.state == JobState::kPending && lease.reason == Reason::kMpsUser) {
    // Placed, but its device's MPS control daemon is still starting (or quitting): the lease
    // waits for it, pending, placed by the next passes, for kLeaseStartTimeoutMs at most.
    starting_leases_.insert(lease.id);
    return OpenedLease{lease, {}};
  }
  lifecycle::Cancel(lease, NameOrUid(*users_, caller.uid), deps_.clock->NowMs());
  lease.reason = Reason::kLeaseNotPlaced;
  lease.detail = "no room when it was opened: " + why;
  Status s = jobs_.Persist(lease, "end", lease.detail);
  if (!s.ok()) log::Warn("lease {}: {}", lease.id, s.message());
  dirty_ = true;  // Step reports it ended and forgets it
  return Unavailable("no room for a lease now: " + why);
}

void Node::ExpireStartingLeases(int64_t now_ms) {
  for (auto it = starting_leases_.begin(); it != starting_leases_.end();) {
    auto job = jobs_.find(*it);
    if (job == jobs_.end() || job->second.state != JobState::kPending) {
      it = starting_leases_.erase(it);  // started, or ended
      continue;
    }
    if (now_ms < job->second.submit_ms + kLeaseStartTimeoutMs) {  // opened at submit_ms
      ++it;
      continue;
    }
    JobRecord& lease = job->second;
    std::string why = lifecycle::Why(lease);
    lifecycle::Cancel(lease, "pinpoint", now_ms);
    lease.reason = Reason::kLeaseNotPlaced;
    lease.detail = "not started within " + std::to_string(kLeaseStartTimeoutMs / 1000) +
                   " s of its opening: " + why;
    Status s = jobs_.Persist(lease, "end", lease.detail);
    if (!s.ok()) log::Warn("lease {}: {}", lease.id, s.message());
    dirty_ = true;
    it = starting_leases_.erase(it);
  }
}

Result<JobRecord> Node::AttachLease(const api::Caller& caller, JobId id, int64_t pid,
                                    std::optional<uint32_t> container_uid) {
  if (caller.uid != 0)
    return PermissionDenied(
        "only root may attach a lease to a container (the container runtime's hook runs as root)");
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.kind != JobKind::kLease) {
    auto stored = Get(id);
    if (stored.ok() && stored->kind == JobKind::kLease)
      return FailedPrecondition("lease " + std::to_string(id) + " already ended (" +
                                JobStateName(stored->state) + ")");
    return NotFound("no lease " + std::to_string(id));
  }
  JobRecord& lease = it->second;
  if (lease.state != JobState::kRunning || lease.cancel_requested)
    return FailedPrecondition("lease " + std::to_string(id) + " is ending");
  // A container of another uid than the lease's is refused where it matters: under MPS (the
  // lease's server serves only its uid: the container would hang at its first CUDA call), and
  // for a lease of a user (who could otherwise stop another user's container by closing it).
  // A root lease on time-sliced or exclusive devices (pinpoint-k8s's, for pods of any uid) takes
  // any container: root may stop any process anyway.
  bool under_mps =
      std::any_of(lease.allocations.begin(), lease.allocations.end(),
                  [&](const Allocation& a) { return sharing_->For(a.mode).Rules().one_user; });
  if (container_uid && *container_uid != lease.uid && (under_mps || lease.uid != 0))
    return PermissionDenied("the container runs as uid " + std::to_string(*container_uid) +
                            " but lease " + std::to_string(id) + " is " + lease.user + "'s (uid " +
                            std::to_string(lease.uid) +
                            "), whose MPS server serves only that uid; run the container as uid " +
                            std::to_string(lease.uid));
  if (deps_.containers == nullptr) return Unavailable("this pinpointd does not attach containers");
  auto key = deps_.containers->CgroupOf(pid);
  if (!key.ok()) return key.status();
  if (lease.lease_cgroup == *key) return lease;
  // Closing the lease stops every process of the cgroup: a user's lease takes only a cgroup whose
  // processes are all that user's (or that holds none yet), never one where another user's (root's)
  // process runs, which the user's close would then kill.
  if (lease.uid != 0) {
    for (int64_t member : deps_.containers->Processes(*key).value_or(std::vector<int64_t>{})) {
      std::optional<ProcUids> uids = deps_.containers->UidsOf(member);
      if (uids && !uids->AllAre(lease.uid))
        return PermissionDenied(
            "cgroup " + EscapeForTerminal(*key) + " holds process " + std::to_string(member) +
            " of uid " + std::to_string(uids->real == lease.uid ? uids->effective : uids->real) +
            ", not lease " + std::to_string(id) + "'s user " + lease.user +
            ": attach only a container whose processes all run as uid " +
            std::to_string(lease.uid));
    }
  }
  if (!lease.lease_cgroup.empty())
    return FailedPrecondition("lease " + std::to_string(id) + " is already attached to " +
                              lease.lease_cgroup);
  for (const auto& [other_id, other] : jobs_) {
    if (other.kind == JobKind::kLease && other.lease_cgroup == *key)
      return FailedPrecondition("cgroup " + *key + " already holds lease " +
                                std::to_string(other_id));
  }
  JobRecord before = lease;
  lease.lease_cgroup = *key;
  Status s = jobs_.Persist(lease, "attach", "container cgroup " + *key);
  if (!s.ok()) {
    lease = before;
    return s;
  }
  return lease;
}

Result<JobRecord> Node::CloseLease(const api::Caller& caller, JobId id) {
  auto found = Get(id);
  if (!found.ok() || found->kind != JobKind::kLease)
    return NotFound("no lease " + std::to_string(id));
  if (!api::MayControlJob(caller, found->uid))
    return PermissionDenied("lease " + std::to_string(id) + " belongs to " + found->user);
  auto it = jobs_.find(id);
  if (it == jobs_.end() || IsFinal(it->second.state)) return found;
  JobRecord& lease = it->second;
  bool empty = lease.lease_cgroup.empty() || runner_.OccupantOf(lease).Processes(lease).empty();
  if (!empty) {
    Status s = Cancel(caller, {id}).front();
    if (!s.ok()) return s;
    return lease;
  }
  runner_.EndLease(lease, Reason::kLeaseClosed);
  return lease;
}

}  // namespace pinpoint::daemon
