// Who runs a placed job's processes (docs/design.md, "The node, in parts"). A job and a lease
// share placement, the sharing backends, accounting and the store; they differ only here. A job's
// processes are started by pinpointd under its supervisor (ShimOccupant); a lease's by a
// container runtime, attached to it afterwards (LeaseOccupant). Node asks the occupant of a
// record's kind (JobRunner::OccupantOf) and never branches on the kind itself.
// Not thread-safe: the daemon's main loop is the only caller.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cdi/spec.h"
#include "common/job_record.h"
#include "daemon/jobs/users.h"
#include "daemon/node/node_options.h"
#include "launch/cgroup.h"
#include "launch/container_cgroups.h"
#include "launch/launcher.h"
#include "pinpoint/api.h"
#include "pinpoint/job.h"
#include "sharing/backends.h"

namespace pinpoint::daemon {

// How an occupant's run ended: a job's supervisor's status, or a lease's cause (a Reason::k...).
struct OccupantEnd {
  std::optional<launch::ExitStatus> exit = std::nullopt;  // set for a job
  Reason cause = Reason::kNone;                           // a lease's, when exit is not set
};

class Occupant {
 public:
  virtual ~Occupant() = default;
  // Starts the processes of `job`, running and placed, with `env` ("NAME=value", prepared by the
  // sharing backends). Returns whether a supervisor now runs with a pid to record (job.pid set).
  // Errors: the start failed (the message says why); the caller ends the job (LaunchFailed).
  virtual Result<bool> Start(JobRecord& job, std::vector<std::string> env) = 0;
  // The end of a job that could not start, for `why`.
  virtual OccupantEnd LaunchFailed(const std::string& why) const = 0;
  // A running job's end, or nullopt while it runs. A job's exit kOrphaned is not an end: its
  // supervisor died while its processes live (JobRunner::HandleOrphan).
  virtual std::optional<OccupantEnd> Poll(const JobRecord& job, int64_t now_ms) = 0;
  // After a restart: how a job found running ended meanwhile (nullopt: it runs, adopt it).
  virtual std::optional<launch::ExitStatus> Found(const JobRecord& job) = 0;
  // Signals and lists the job's processes. Signal errors: kUnavailable when the job has not
  // started yet (the caller tries again).
  virtual Status Signal(const JobRecord& job, int signal) = 0;
  // The job's first process alone (submit --signal=B:); errors as Launcher::SignalLeader's.
  virtual Status SignalLeader(const JobRecord& job, int signal) = 0;
  // As Signal, and to each process of the job that left its process group (a suspend's stop and
  // continue reach them all); errors as Signal's.
  virtual Status SignalAll(const JobRecord& job, int signal) { return Signal(job, signal); }
  virtual std::vector<int64_t> Processes(const JobRecord& job) = 0;
  // Processes, known complete: kUnavailable while they are not all found yet (ask again at a later
  // pass; Launcher::AllJobProcesses).
  virtual Result<std::vector<int64_t>> AllProcesses(const JobRecord& job) { return Processes(job); }
  // The job gives up its devices (its end, or a requeue): what the occupant held beside them goes,
  // and what the job used of it is read back first (JobRecord::readback).
  virtual void Release(JobRecord& job) = 0;
};

// A job: pinpoint-shim supervises its command, in its own cgroup when the node has cgroups.
class ShimOccupant : public Occupant {
 public:
  // Not owned; `cgroups` may be null. `users` gives a switched job its groups.
  ShimOccupant(const NodeOptions* options, launch::Launcher* launcher, launch::Cgroups* cgroups,
               UserDirectory* users)
      : options_(options), launcher_(launcher), cgroups_(cgroups), users_(users) {}
  Result<bool> Start(JobRecord& job, std::vector<std::string> env) override;
  OccupantEnd LaunchFailed(const std::string& why) const override;
  std::optional<OccupantEnd> Poll(const JobRecord& job, int64_t now_ms) override;
  std::optional<launch::ExitStatus> Found(const JobRecord& job) override;
  Status Signal(const JobRecord& job, int signal) override;
  Status SignalLeader(const JobRecord& job, int signal) override;
  Status SignalAll(const JobRecord& job, int signal) override;
  std::vector<int64_t> Processes(const JobRecord& job) override;
  Result<std::vector<int64_t>> AllProcesses(const JobRecord& job) override;
  void Release(JobRecord& job) override;

  // The job's directory under the state directory; the file an output pattern of `job` names
  // (submit -o/-e; "" for none); the supervisor's handle of a job.
  static std::string JobDir(const NodeOptions& options, JobId id);
  static std::string OutputFile(const JobRecord& job, const std::string& pattern);
  launch::JobHandle Handle(const JobRecord& job) const;

 private:
  // What the kernel shows the job's new cgroup applies, into job.readback; a warning when it is
  // not what the job asked for.
  void ReadBackLimits(JobRecord& job) const;

  const NodeOptions* options_;
  launch::Launcher* launcher_;
  launch::Cgroups* cgroups_;
  UserDirectory* users_;
};

// A lease: a container runtime starts the processes and attach_lease names their cgroup. Placing
// it computes the container's edits; it ends when its cgroup empties, when no container attached
// in time, or when it is cancelled before one did.
class LeaseOccupant : public Occupant {
 public:
  // Not owned; `containers` and `specs` may be null (no attach; no CDI specs to remove).
  // `devices`: the node's devices as they are now (Node's).
  // `sharing`: each allocation's backend names the paths its clients reach (ClientPaths).
  LeaseOccupant(const NodeOptions* options, const sched::Inventory* devices,
                launch::ContainerCgroups* containers, cdi::LeaseSpecs* specs,
                const sharing::Backends* sharing)
      : options_(options),
        devices_(devices),
        containers_(containers),
        specs_(specs),
        sharing_(sharing) {}
  Result<bool> Start(JobRecord& job, std::vector<std::string> env) override;
  OccupantEnd LaunchFailed(const std::string& why) const override;
  std::optional<OccupantEnd> Poll(const JobRecord& job, int64_t now_ms) override;
  std::optional<launch::ExitStatus> Found(const JobRecord&) override { return std::nullopt; }
  Status Signal(const JobRecord& job, int signal) override;
  // kFailedPrecondition: a container's processes have no first one pinpoint started.
  Status SignalLeader(const JobRecord& job, int signal) override;
  std::vector<int64_t> Processes(const JobRecord& job) override;
  // Forgets its edits and removes the CDI spec `pinpoint cdi` wrote for it.
  void Release(JobRecord& job) override;

  // The container edits of a lease started by this process (empty otherwise).
  LeaseEdits EditsOf(JobId id) const;

 private:
  const NodeOptions* options_;
  const sched::Inventory* devices_;
  launch::ContainerCgroups* containers_;
  cdi::LeaseSpecs* specs_;
  const sharing::Backends* sharing_;
  std::map<JobId, LeaseEdits> edits_;  // leases started in this process -> their edits
};

}  // namespace pinpoint::daemon
