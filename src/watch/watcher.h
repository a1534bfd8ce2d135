// Watcher: polls the GPUs on its own thread, maps GPU processes to jobs and keeps each job's
// device memory, peak and energy (Accountant). NVML process queries take milliseconds and a
// driver lock, so they never run on the daemon's main loop or the launch path.
//
// The daemon's main loop tells the watcher which jobs run (SetJobs) and collects what it found
// (Take). Budget breaches also make wake_fd() readable, so the main loop acts on them without
// waiting for its next tick.
//
// Thread-safety: SetJobs, Take, Latest and wake_fd may be called from any thread; Start/Stop
// from the owner's thread. The GpuBackend is used only by the watcher's thread (or by PollOnce's
// caller when the thread is not running); nothing else may use it meanwhile.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "gpu/gpu_backend.h"
#include "pinpoint/status.h"
#include "watch/accountant.h"
#include "watch/process_owner.h"
#include "watch/watched_job.h"

namespace pinpoint::watch {

struct WatcherOptions {
  int64_t interval_ms = 1000;
  AccountantOptions accountant;
  std::vector<int> gpu_indices;  // physical GPUs to poll
  // A process of an ended job's user, in no job, still on the job's GPUs this long after the job
  // left the watched set is killed (docs/security.md): on a managed node it belongs to no job, and
  // it would hold the GPUs from everyone for as long as it runs. -1: never killed, only waited for.
  int64_t settle_deadline_ms = 60'000;
  // A process sent SIGKILL that still holds the GPU this long after is reported as surviving the
  // kill (Lingering::unkillable): a process stuck in the kernel (D state, a driver call).
  int64_t kill_grace_ms = 10'000;
};

// The watcher's last poll, for listings and metrics.
struct WatchView {
  int64_t polls = 0;         // polls done so far
  int64_t poll_time_ms = 0;  // when the last poll ended (clock time)
  int64_t last_poll_duration_us = 0;
  std::vector<GpuReading> gpus;
  std::map<int, GpuAccount> accounts;
  std::map<JobId, JobUsage> jobs;  // jobs watched at the last poll
  std::map<JobId, std::map<int, uint64_t>> job_mem_by_gpu;
};

// Processes that still hold the GPUs of a job that has left the watched set.
struct Lingering {
  std::vector<int64_t> owned;     // the job's own (its cgroup, session or key)
  std::vector<int64_t> loose;     // its user's, in no job and no MPS server
  std::map<int64_t, int> gpu_of;  // each of those pids -> the NVML index it was seen on
  int64_t since_ms = 0;           // when the job left the watched set (clock time)
  int64_t deadline_ms =
      -1;  // when `loose` are killed (settle_deadline_ms after since_ms); -1: never
  std::vector<int64_t> killed;  // of `loose`, those sent SIGKILL at this poll: past the deadline
  // Of `owned` and `loose`, those due to be killed that hold on: pinpointd may not kill them (a
  // set-user-id program: not all their uids are the user's), or they were still there
  // kill_grace_ms after their SIGKILL. Their GPUs stay held, and the node drains them.
  std::vector<int64_t> unkillable;
};

// What the main loop collects.
// What the watcher read of a running job's own processes (docs/enforcement.md): of the variables
// its limits are applied through (WatchedJob::env_vars), what its first process read ran with
// (the job's first process, or the first of its processes NVML showed on a GPU), and each value
// any of its processes on a GPU ran with over its life; and every GPU NVML saw one of them on.
struct JobSeen {
  bool env_read = false;
  std::map<std::string, std::string> env;  // the first process read ("" : it had no such variable)
  int gpu_env_reads = 0;                   // how many of its GPU processes were read
  // Each distinct value its GPU processes ran with, at most Readback::kMaxValuesSeen a variable.
  std::map<std::string, std::vector<std::string>> gpu_env;
  std::vector<int> gpus;  // physical GPU indices, ascending
  bool operator==(const JobSeen&) const = default;
};

struct WatchUpdate {
  std::vector<OverBudget> over_budget;  // breaches seen since the last Take
  std::map<JobId, JobUsage> usage;      // current usage of the jobs watched at the last poll
  std::map<JobId, JobUsage> closed;     // final usage of jobs that left the watched set
  // Jobs that left the watched set and whose GPUs no process of theirs holds any more (NVML's
  // process lists): their devices may go to other jobs. Each is reported once.
  std::vector<JobId> settled;
  // Jobs that left the watched set while processes of theirs (or of their user, in no job) still
  // hold one of their GPUs, as of the last poll: polled again until none is left.
  std::map<JobId, Lingering> lingering;
  // Critical Xid errors the driver reported since the last Take, with the clock time of the poll
  // that found them; at most kMaxPendingXids are kept.
  std::vector<std::pair<gpu::XidEvent, int64_t>> xids;
  static constexpr size_t kMaxPendingXids = 1024;
  // What changed since the last Take of what was seen of each watched job.
  std::map<JobId, JobSeen> seen;
};

class Watcher {
 public:
  // The most environments read for one job's run (JobSeen): a job whose processes never carry
  // its key costs no more than this, whatever it does.
  static constexpr int kMaxEnvReads = 128;

  // `backend`, `owner` and `clock` are not owned and must outlive the watcher.
  Watcher(WatcherOptions options, gpu::GpuBackend* backend, ProcessOwner* owner, Clock* clock);
  ~Watcher();  // stops the thread
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  // Starts the polling thread. Errors: kIo when the wake descriptor cannot be made.
  Status Start();
  void Stop();  // after the poll in progress, if any; a started thread has polled at least once

  // The jobs that run now (replaces the previous set). A job that leaves the set is polled once
  // more, soon (the thread does not wait for its interval), for the energy of its last interval,
  // and then reported in WatchUpdate::closed; then in WatchUpdate::settled once no process of it
  // holds its GPUs, and meanwhile in WatchUpdate::lingering.
  void SetJobs(std::vector<WatchedJob> jobs);
  // A job that ended while the watcher did not watch it (pinpointd restarted): its GPUs are looked
  // at as if it had left the watched set at since_ms, so its deadline runs from then, and it is
  // reported in settled or lingering like the others (never in closed: its usage is not charged).
  void Resume(WatchedJob job, int64_t since_ms);
  WatchUpdate Take();
  WatchView Latest() const;
  // Each polled GPU's utilisation over about the last minute (GpuAccount::busy_pct, rounded), by
  // NVML index; GPUs that report none are absent. Cheaper than Latest: no job is copied.
  std::map<int, int> BusyByGpu() const;
  // Readable while a Take would return a budget breach; -1 before Start.
  int wake_fd() const { return wake_fd_; }

  // One poll on the calling thread (tests, and the thread's body).
  void PollOnce();

 private:
  void Run();
  // One poll's jobs, taken under the lock: those accounted (running, or closing with a last
  // interval to charge), those that left the set and are not settled (with when each left), and
  // those whose processes are looked for (both).
  struct Round {
    std::vector<WatchedJob> running;  // the set as SetJobs gave it
    std::vector<WatchedJob> watched;
    std::vector<WatchedJob> closing;
    std::map<JobId, int64_t> since;
    std::set<JobId> accounted_ids;
    std::vector<WatchedJob> ownable;
  };
  Round BeginRound();
  std::vector<GpuReading> ReadGpus();
  // The job among `ownable` of each process on the GPUs.
  std::map<int64_t, JobId> OwnersOf(const std::vector<GpuReading>& readings,
                                    const std::vector<WatchedJob>& ownable);
  // What still holds the GPUs of each job that left the set; what outlived one is killed.
  std::map<JobId, Lingering> LingeringOf(const Round& round,
                                         const std::vector<GpuReading>& readings,
                                         const std::map<int64_t, JobId>& owners, int64_t now_ms);
  // Under mu_: the watched jobs' usage for the view and for Take, and what changed of seen_.
  void PublishUsage(const std::vector<JobId>& seen_changed);
  // Under mu_: each closing job's final usage once, then its lingering or its settling. Returns
  // whether there was any (the main loop is woken).
  bool PublishClosing(const std::vector<WatchedJob>& closing,
                      std::map<JobId, Lingering>& lingering);
  // The processes on `job`'s GPUs that are its own (`owners`) or its user's in no job. A process
  // another job claims (`owners`) is that job's only on a GPU that job holds (`gpus_of`): one on
  // a GPU its claimed job does not hold is no job's to keep there.
  Lingering LingeringOn(const WatchedJob& job, const std::vector<GpuReading>& readings,
                        const std::map<int64_t, JobId>& owners,
                        const std::map<JobId, std::set<int>>& gpus_of) const;
  // Kills what outlived `job` on its GPUs: its own processes at once, its user's loose ones once
  // the deadline has passed (recorded in left->killed); those that hold on in left->unkillable.
  void KillLeftovers(const WatchedJob& job, int64_t now_ms, Lingering* left);
  // Sends `pid` (of user `uid`) SIGKILL at now_ms; false when it could not be sent. A process
  // that may not be killed, or was sent one kill_grace_ms ago and is still there, goes into
  // left->unkillable.
  bool KillHolder(int64_t pid, uint32_t uid, int64_t now_ms, Lingering* left);
  // Notes, in seen_, the GPUs each accounted job's processes (`accounted`) are on and what each of
  // those processes runs with, each read once (then its owner checked again, so that a pid reused
  // between NVML's list and the read is never taken for the job's). Returns the jobs whose entry
  // changed.
  std::vector<JobId> NoteSeen(const std::vector<GpuReading>& readings,
                              const std::map<int64_t, JobId>& accounted,
                              const std::vector<WatchedJob>& ownable);
  // For each running job whose environment is not read yet: its supervisor's children (the job's
  // first process), read as NoteSeen reads a GPU process, whether or not it reaches a GPU. With
  // `window_only`, only the jobs in their first kLeaderWindow (the checks between polls); else
  // every one not read yet (a poll: a job whose first process started late is read all the same).
  std::vector<JobId> NoteLeaders(const std::vector<WatchedJob>& running,
                                 const std::vector<WatchedJob>& ownable, bool window_only);
  // The values of `job`'s env_vars in `pid`'s environment ("" for one it lacks), when the process
  // is still the job's after the read and, with `need_key`, carries the job's PINPOINT_JOB_ID (a
  // child between its fork and its exec runs with its parent's). nullopt when not read: at most
  // kMaxEnvReads reads a job.
  std::optional<std::map<std::string, std::string>> ReadEnvironment(
      int64_t pid, const WatchedJob& job, const std::vector<WatchedJob>& ownable, bool need_key);
  // Whether a job that entered the set less than kLeaderWindow ago has not had its environment
  // read.
  bool LeadersDue() const;
  // NoteLeaders between polls, its news handed to Take at once. Returns LeadersDue().
  bool CheckLeaders();
  void Wake();  // the main loop's descriptor (wake_fd)
  static constexpr int kLeaderCheckMs = 20;
  static constexpr size_t kLeadersPerCheck = 8;
  static constexpr std::chrono::milliseconds kLeaderWindow{2000};

  const WatcherOptions options_;
  gpu::GpuBackend* const backend_;
  ProcessOwner* const owner_;
  Clock* const clock_;
  int wake_fd_ = -1;

  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;         // guarded by mu_
  std::vector<WatchedJob> jobs_;  // guarded by mu_
  struct Closing {
    WatchedJob job;
    bool closed = false;   // its final usage was reported; it waits only to settle
    int64_t since_ms = 0;  // when it left the set
  };
  std::map<JobId, Closing> closing_;  // guarded by mu_: left the set, not settled yet
  bool poll_soon_ = false;            // guarded by mu_: a job left the set
  WatchUpdate pending_;               // guarded by mu_
  WatchView view_;                    // guarded by mu_
  Accountant accountant_;             // used by the polling thread only
  std::map<JobId, JobSeen> seen_;     // used by the polling thread only
  // When each running job was first in a poll, and how many environments were read for it
  // (polling thread only; forgotten when it leaves the set).
  std::map<JobId, int64_t> first_seen_;  // clock ms
  std::map<JobId, int> env_reads_;
  std::map<JobId, std::set<int64_t>> env_read_pids_;  // its GPU processes read (NoteSeen)
  size_t leader_cursor_ = 0;  // where NoteLeaders goes on (polling thread only)
  // When each process holding an ended job's GPUs was first sent SIGKILL (polling thread only;
  // forgotten once it holds none).
  std::map<int64_t, int64_t> kill_sent_ms_;
  std::thread thread_;
};

}  // namespace pinpoint::watch
