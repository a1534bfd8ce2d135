// ProcessLauncher: the real Launcher. Forks and execs pinpoint-shim for each job (see
// launcher.h for the job directory contract).
#pragma once

#include <map>
#include <set>
#include <string>

#include "common/process.h"
#include "launch/job_identity.h"
#include "launch/launcher.h"
#include "launch/process_keys.h"
#include "launch/process_scan.h"

namespace pinpoint::launch {

class ProcessLauncher : public Launcher {
 public:
  // `shim_path`: absolute path of the pinpoint-shim binary.
  explicit ProcessLauncher(std::string shim_path);
  // With the given reader of processes' keys (tests).
  ProcessLauncher(std::string shim_path, ProcessKeys keys);
  // With the given reader of the node's processes too (tests).
  ProcessLauncher(std::string shim_path, ProcessKeys keys, ProcessScan scan);

  Result<JobHandle> Launch(const LaunchSpec& spec) override;
  std::optional<ExitStatus> Poll(const JobHandle& handle) override;
  Status Signal(const JobHandle& handle, int signal) override;
  Status SignalLeader(const JobHandle& handle, int signal) override;
  Status SignalAll(const JobHandle& handle, int signal) override;
  Result<std::vector<int64_t>> AllJobProcesses(const JobHandle& handle) override;
  void Reap() override;
  std::vector<int64_t> JobProcesses(const JobHandle& handle) override;
  // True when this pass left environments or processes unread (ProcessKeys' and ProcessScan's
  // budgets): an ended job's end waits for the next pass.
  bool MoreDue() const override { return keys_.Refused() || scan_.Refused(); }
  // How many processes' keys are known (tests).
  size_t known_processes() const { return keys_.size(); }
  size_t environments_read() const { return keys_.reads(); }
  int64_t process_rounds() const { return scan_.rounds(); }

 private:
  // Signal and SignalLeader: the job's process group, or its leader alone (only while its
  // supervisor lives), as those say.
  Status SignalJob(const JobHandle& handle, int signal, bool leader_only);
  // The facts of the job in `handle`'s directory (open as `dir_fd`): known since its launch, or
  // read from its spec.json once (a job an earlier pinpointd launched).
  const SpecFacts& FactsFor(const JobHandle& handle, int dir_fd);
  // The job's processes (JobIdentity) among the node's as scan_'s round has read them
  // (process_launcher.cc). With `partial`, it says the round is not complete yet (its budget): the
  // answer holds what was found so far, and "none" is not known.
  // With `unsure`, it counts the job user's processes whose key is not known yet: those inside an
  // exec, whose environment cannot be read yet (ProcessBetweenPrograms), that could be the job's
  // (orphans, and children of the job's processes), those this pass's budget left unread, and one
  // for a round during which the pids wrapped around.
  // `launched`: LaunchedSeq of the job (a round that completed before it knows none of it).
  std::vector<int64_t> Members(const JobIdentity& id, int64_t launched, int* unsure = nullptr,
                               bool* partial = nullptr);
  // The ids of the process `p`, kept for its life (`uids_`), read on the scan's budget; false when
  // that is spent.
  bool KnownUids(ProcessScan::Entry& p);
  // SignalAll and AllJobProcesses' look: the job's members by Members, its identity into `id`;
  // `complete` false while the look is partial or unsure. None for a job whose directory is gone.
  std::vector<int64_t> MembersOf(const JobHandle& handle, JobIdentity& id, bool& complete);
  // SignalAll and AllJobProcesses' kUnavailable.
  static Status NotAllFound(const JobHandle& handle);
  // Which launch of this launcher started the job (1, 2, ...); 0 for one another launched.
  int64_t LaunchedSeq(const JobHandle& handle) const;
  // Whether an ended job with `unsure` such processes is not over yet: true while they are there,
  // for at most kUnsureWaitMs from its first poll that found one.
  bool Unsettled(JobId job, int unsure);

  std::string shim_path_;
  std::set<int64_t> children_;       // shim pids forked by this process, not yet reaped
  std::set<JobId> leftovers_named_;  // jobs whose left-running processes the log has named
  // When an ended job's poll first found a process that could be its own inside an exec.
  std::map<JobId, int64_t> unsure_since_ms_;
  std::map<std::string, SpecFacts> facts_;  // by job directory, until the job is over
  ProcessKeys keys_;                        // each process's job keys, read once in its life
  ProcessScan scan_;                        // the node's processes, a budget's worth per pass
  int64_t retained_round_ = -1;             // the round whose processes keys_ was last trimmed to
  int64_t launches_ = 0;                    // launches so far
  int64_t round_launches_ = 0;              // launches when the last round completed
  std::map<std::string, int64_t> launched_seq_;  // by job directory, until the job is over
  // Each process's ids (by pid: its start ticks and ids), read once in its life.
  std::map<int64_t, std::pair<uint64_t, ProcUids>> uids_;
  // What keys_ knows of the job's key, for JobIdentity::Holds.
  JobIdentity::KnownKey KnownKeyOf(const JobIdentity& id) const;
};

// Start time of `pid` in clock ticks since boot (field 22 of /proc/<pid>/stat), or 0 when the
// process does not exist.
uint64_t ProcessStartTicks(int64_t pid);

}  // namespace pinpoint::launch
