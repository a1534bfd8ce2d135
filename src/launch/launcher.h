// Launcher: starts a job's program and reports how it ended. Behind an interface so the daemon
// can be tested with FakeLauncher.
//
// The real launcher (ProcessLauncher) runs each job under a small supervisor process,
// pinpoint-shim, in its own session. The shim outlives pinpointd, so jobs keep running when the
// daemon dies, and writes the job's exit status to the job directory, where a restarted daemon
// finds it. A job directory holds: spec.json (what to run), lock (flock held by the shim for its
// whole life: locked <=> supervisor alive), job.pid (the job's pid and process group, written
// durably before the job runs any code), exit.json (how it ended), exit.slot (a preallocated
// place for the exit status when exit.json cannot be written, e.g. on a full disk), stdout,
// stderr.
//
// The directory is made fresh by Launch (owned by pinpointd's user, writable by it only; whatever
// was at its path before is moved aside to <dir>.stale-<n>), and every file in it is created and
// read without following links (common/file_util.h *At helpers): root never writes or reads
// through a link a user planted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pinpoint/job.h"
#include "pinpoint/status.h"

namespace pinpoint::launch {

struct LaunchSpec {
  JobId job_id = 0;
  std::vector<std::string> argv;
  std::string cwd;
  std::vector<std::string> env;  // "NAME=value", the job's whole environment
  bool switch_user = false;      // when false, the job runs as pinpointd's own user
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> groups;  // supplementary groups (used when switch_user)
  std::string job_dir;           // absolute; created by Launch if missing
  std::string cgroup_dir;        // absolute cgroup v2 directory to join, or empty
  // (Launch adds PINPOINT_JOB_KEY=<random> to `env`: how the job's processes are found once they
  // left its session where it has no cgroup.)
  // Absolute files for the job's stdout and stderr (submit -o/-e), or empty for the job
  // directory's. Opened by the job's process after it became the job's user (so with exactly
  // that user's rights), without following a link in the last component, and only when a
  // regular file or a character device (/dev/null); a regular file is truncated. Equal paths
  // share one open file. The job fails to launch when one cannot be opened.
  std::string stdout_path;
  std::string stderr_path;
  // The job's umask: it runs with it, and its stdout and stderr (those of the job directory as
  // well, owned by the job's user and group) are created with mode 0666 & ~umask.
  int umask = 077;
  // While the job runs, the shim looks this often whether its job directory still exists. Once it
  // is removed (its state directory deleted, a purge) nobody can collect the job: the shim sends
  // its process group SIGTERM, SIGKILL after orphan_grace_ms, says so on its stderr (pinpointd's
  // log) and exits without a status. Tests make them short.
  int orphan_check_ms = 10000;
  int orphan_grace_ms = 10000;
  // The lock a running pinpointd holds on its state directory (an OFD lock on
  // <state_dir>/private/pinpointd.lock), and how long the job may run while nobody holds it: at
  // each check the shim asks whether it is held, and once it has been free for daemon_away_ms
  // (no pinpointd, so no time limit, memory watch or cancel) it ends the job as above and records
  // why in its exit status, which the next pinpointd logs. Empty or 0: never.
  std::string daemon_lock;
  int64_t daemon_away_ms = 0;
  // The host CPUs the job runs on (its cpuset): the shim binds itself to them before it starts the
  // job, so the job's processes inherit them. Empty: any.
  std::vector<int> cpus = {};
  // The most the job's stdout and stderr in the job directory (on the state directory's
  // filesystem) may occupy together, in allocated blocks (output_watch.h): the shim looks every
  // output_check_ms, and once they are past it ends the job as above, cuts them to the bound
  // with a last line that says so, and records why in its exit status. 0: no bound. Output the
  // user sent elsewhere (-o/-e) is theirs. The bounds over several jobs (a user's, the store's
  // reserve) are pinpointd's (daemon/node/output_guard.h).
  uint64_t max_output_bytes = 0;
  int output_check_ms = 1000;
};

// Identifies a launched job's supervisor across daemon restarts.
struct JobHandle {
  JobId job_id = 0;
  std::string job_dir;
  int64_t pid = 0;               // supervisor pid (its session holds the job); 0 if unknown
  uint64_t pid_start_ticks = 0;  // /proc/<pid>/stat start time, to tell a reused pid apart
};

struct ExitStatus {
  enum class Kind {
    kExited,         // the program exited; exit_code is set
    kSignaled,       // the program was killed by term_signal
    kLaunchFailed,   // the program never ran (exec, chdir, setuid failed); error says why
    kNoStatus,       // the supervisor is gone and left no status after starting the job
    kNeverLaunched,  // the program never started (no lock, or no job.pid): safe to launch again
    // Not an end: the supervisor died without a status but processes of the job still live. The
    // job keeps its resources; Signal and JobProcesses still reach those processes; once they
    // are all gone Poll reports kNoStatus.
    kOrphaned
  };
  Kind kind = Kind::kNoStatus;
  int exit_code = 0;
  int term_signal = 0;
  std::string error;
  // The supervisor ended the program for its output (LaunchSpec::max_output_bytes; `error` says
  // so): the job ends output-exceeded, as one pinpointd ends for its output.
  bool output_exceeded = false;
};

// Not thread-safe: the daemon's main loop owns it.
class Launcher {
 public:
  virtual ~Launcher() = default;
  // Starts the job. On success the job's supervisor runs and the handle identifies it.
  // Errors: kIo when the job directory or spec cannot be written or fork fails.
  virtual Result<JobHandle> Launch(const LaunchSpec& spec) = 0;
  // Non-blocking. nullopt while the job's supervisor lives; kOrphaned while the supervisor is
  // dead but the job's processes live; its final ExitStatus once it has ended.
  // Works for jobs started by an earlier daemon process too.
  virtual std::optional<ExitStatus> Poll(const JobHandle& handle) = 0;
  // Sends `signal` to the job's process group, or, when its supervisor is dead, to each process
  // verified to be the job's (its session, its cgroup). Ok when the job is already gone.
  // kUnavailable when the job has not started yet (its supervisor lives but has not recorded the
  // job's pid): nothing was sent, and the caller sends it again later.
  virtual Status Signal(const JobHandle& handle, int signal) = 0;
  // Sends `signal` to the job's first process alone (the command pinpoint started, its group's
  // leader; submit --signal=B:), while its supervisor lives. Ok when the job is already gone;
  // kUnavailable when it has not started yet (as Signal); kFailedPrecondition when its supervisor
  // is dead (the leader's pid may have been reused: nothing is sent).
  virtual Status SignalLeader(const JobHandle& handle, int signal) = 0;
  // As Signal, and to each of the job's processes that left its process group (AllJobProcesses,
  // each verified as it is signalled): a stop or a continue (a suspend) reaches every one.
  // kUnavailable, after signalling those found, while they are not all found yet (a node without
  // cgroups, whose processes are read a budget's worth per pass): the caller sends it again at a
  // later pass. Errors otherwise as Signal's.
  virtual Status SignalAll(const JobHandle& handle, int signal) { return Signal(handle, signal); }
  // JobProcesses, known complete: kUnavailable while the look at the node's processes has not
  // covered them all yet (ask again at a later pass).
  virtual Result<std::vector<int64_t>> AllJobProcesses(const JobHandle& handle) {
    return JobProcesses(handle);
  }
  // Reaps supervisors that were this process's children and have exited (call on SIGCHLD). The
  // daemon calls it at the start of each pass.
  virtual void Reap() = 0;
  // The pids of the job's processes (its session, and its cgroup if it has one; the supervisor
  // excluded), for MPS terminate_client. Found whether or not the supervisor still lives. Empty
  // when the job is gone.
  virtual std::vector<int64_t> JobProcesses(const JobHandle& handle) = 0;
  // Whether this pass left work that the next one should do at once (an ended job's processes
  // not all looked at within the pass's budget): the daemon then runs its next pass without
  // waiting for its tick.
  virtual bool MoreDue() const { return false; }
};

}  // namespace pinpoint::launch
