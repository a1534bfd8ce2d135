// MpsDaemons: the MPS mode (mps_backend.h) as it runs on a GPU node. Runs one
// `nvidia-cuda-mps-control -f` per device for the Unix user whose jobs use it, with
// CUDA_VISIBLE_DEVICES set to the device's UUID and pipe and log directories <mps_root>/dev<device
// index>/<uid>/{pipe,log}, owned by that user, mode 0700. Started when the first slice lands on the
// device, quit when idle for idle_quit_ms, checked on every Poll (control daemon alive, new
// fatal-fault lines in the server log), restarted after a crash. Commands (get_server_list,
// get_client_list, terminate_client, quit) go through the control binary with the daemon's pipe
// directory, as NVIDIA documents, as the daemon's user.
//
// Nothing here waits on a user (issue 22): a control daemon's start, every command and a quit run
// as children the main loop never waits on (AsyncCommand), each with a deadline, looked at by
// Poll, whose descriptors WaitFds gives to the loop's poll set. While a device's daemon starts or
// quits, Prepare answers kFailedPrecondition ("starting", "quitting") and the job waits;
// Poll reports kServerReady / kServerStartFailed / kServerQuit when that changes.
//
// Trust (docs/security.md): the pipe and log directories belong to the user, so nothing read from
// them is trusted. The control daemon runs in the foreground as pinpointd's child and is held by
// a pidfd from its fork on; no pid is ever read from a file. A daemon left by an earlier pinpointd
// is adopted, and a dead daemon's servers are killed, only when /proc shows every uid of the
// process to be the device user's, checked through a pidfd, so root never signals a process the
// user could not signal themselves. Fatal-fault lines in the server log are claims of that user
// (sharing::Event::uid), read with bounded, non-following reads (ServerLogScanner).
#pragma once

#include <functional>
#include <map>
#include <set>

#include "common/clock.h"
#include "common/file_util.h"
#include "common/process.h"
#include "mps/async_command.h"
#include "mps/mps_backend.h"
#include "mps/server_log_scanner.h"

namespace pinpoint::mps {

struct MpsDaemonsOptions {
  std::string mps_root;                        // absolute
  sharing::PlacementRules rules = MpsRules();  // the mode's (MpsRulesOf in the daemon)
  std::string control_binary = "nvidia-cuda-mps-control";
  int64_t idle_quit_ms = 60000;  // 0: never quit an idle daemon
  bool switch_user = false;      // run each daemon as its user (pinpointd is root)
  // The deadline of a control command, of a daemon's start (its control socket appears) and of
  // a safe cancel's whole exchange; a quit gets at most 5 s, then the daemon is killed.
  int command_timeout_ms = 10000;
  // A daemon with clients is asked `get_server_list` this often, by a child process the main loop
  // never waits on (Poll looks at it); one that has not answered within probe_timeout_ms is
  // unresponsive (sharing::Event::Kind::kServerUnresponsive). 0: no probes.
  int64_t probe_interval_ms = 2000;
  int64_t probe_timeout_ms = 5000;
};

// The most a control command may print; an answer that is longer is refused.
inline constexpr size_t kMaxCommandOutputBytes = 64 * 1024;

class MpsDaemons : public MpsBackend {
 public:
  MpsDaemons(MpsDaemonsOptions options, Clock* clock);
  ~MpsDaemons() override = default;

  // Whether the control binary can be run here ("" = yes, else why not).
  static std::string Unusable(const std::string& control_binary);
  // The MPS server program's canonical path (what /proc/<pid>/exe of a server names): beside
  // the control program, else in PATH; "" when neither has one.
  static std::string ServerProgram(const std::string& control_binary);

  // Makes sure the device's control daemon for slice.uid runs (starting it, or replacing an idle
  // one of another user) and returns the client's variables (mps_backend.h). Never waits.
  // Errors: kUnavailable when no daemon can be started (the reason); kFailedPrecondition when
  // another user's clients still use the device, or while its daemon starts or the previous
  // user's quits (ask again after Poll reports kServerReady or kServerQuit).
  Result<std::map<std::string, std::string>> Prepare(const sharing::Slice& slice) override;
  // Counts the client again, starting its daemon when none runs (without waiting).
  void Adopt(const sharing::Slice& slice) override;
  // The device may be quit once idle.
  void Release(const sharing::Slice& slice) override;
  // Safe cancel, step one: asks the device's MPS server to terminate each of pids() that is its
  // client (terminate_client), so no client is killed by a signal with GPU work in flight. Pids
  // that are not clients are ignored. Stopping(slice.job_id) stays true until the exchange has
  // ended (answered, failed, or past its deadline). Errors: kUnavailable when the daemon cannot
  // be asked (then nothing is in flight).
  Status StopClients(const sharing::Slice& slice,
                     const std::function<std::vector<int64_t>()>& pids) override;
  bool Stopping(uint64_t job_id) const override;
  // Health checks, fault lines, starts and quits in flight, idle quits.
  std::vector<sharing::Event> Poll(int64_t now_ms) override;
  // After a fault, once the device's old clients are gone: quits its daemons, so the next client
  // gets a fresh server.
  void ResetDevice(int device_index) override;
  // The devices that have a control daemon.
  std::map<int, sharing::ServerInfo> Servers() const override;
  std::vector<int> WaitFds() const override;
  // A start that fails later is reported by Poll (kServerStartFailed).
  Status Prestart(const sharing::Slice& slice) override;

  // Quits every daemon it started and waits (at most about 5 s each) until they are gone: for
  // tests and admins, never on the main loop (pinpointd does not call this on a normal stop:
  // running jobs keep their servers).
  void QuitAll();

 private:
  enum class Phase {
    kStarting,  // the control daemon was forked; its control socket has not appeared yet
    kRunning,
    kQuitting,  // asked to quit (idle, handed to another user, reset); gone once it exits
    kFailed,    // its start failed: start_error says why; the next Prepare reports it
  };
  // A start in flight: the forked control daemon, the pipe its exec closes, and an inotify
  // watch on the pipe directory set up before the fork, so the socket cannot appear unseen.
  struct Starting {
    PidFd child;
    UniqueFd exec_done;  // reads EOF once the child has exec'd (or exited)
    UniqueFd watch;
    bool execed = false;
    int64_t deadline_ms = 0;
  };
  struct Daemon {
    std::string uuid;
    uint32_t uid = 0;
    uint32_t gid = 0;
    std::string pipe_dir;
    std::string log_dir;
    Phase phase = Phase::kStarting;
    PidFd control;       // the control daemon; invalid while none runs
    bool child = false;  // started by this process (reaped here), not adopted
    int clients = 0;
    int64_t idle_since_ms = 0;
    // Where MPS reports a client's fatal fault: the foreground control daemon's output (servers
    // inherit it) and, where MPS writes one, server.log. Both are the user's.
    ServerLogScanner foreground_log{""};
    ServerLogScanner server_log{""};
    std::vector<PidFd> orphan_servers;  // servers left by a control daemon that died
    int restarts = 0;
    bool keep = false;  // prestarted: never quit for being idle
    Starting starting;
    std::string start_error;  // kFailed: why
    // kQuitting: the `quit` command, when it ends the daemon gets killed, and what Poll reports
    // once it is gone (empty: nothing).
    AsyncCommand quit;
    int64_t quit_deadline_ms = 0;
    std::string quit_detail;
    // The health probe in flight (get_server_list); an unanswered one past probe_timeout_ms
    // makes the daemon unresponsive.
    AsyncCommand probe;
    int64_t probe_started_ms = 0;
    int64_t next_probe_ms = 0;
  };
  // A safe cancel in flight (StopClients): the command running now, and what is left to ask.
  struct Terminator {
    int device_index = 0;
    uint32_t uid = 0;
    std::string pipe_dir, log_dir;
    uint32_t gid = 0;
    std::set<int64_t> pids;
    std::vector<std::string> asks;  // commands still to run, in order
    AsyncCommand running;
    std::string running_command;
    int64_t deadline_ms = 0;  // of the whole exchange
  };

  Status Start(int device_index, Daemon& d);
  // Forks the control binary in the foreground as d's user (kStarting). Errors: kIo, kUnavailable.
  // (Not an AsyncCommand: the daemon outlives the start, held by a pidfd.)
  Status Spawn(Daemon& d);
  // A start in flight, looked at without waiting: kRunning once the control socket exists,
  // kFailed (start_error) when the child exited or missed its deadline.
  void CheckStart(int device_index, Daemon& d, int64_t now_ms);
  // Asks d to quit (kQuitting): `detail` is reported by Poll once it is gone.
  void BeginQuit(Daemon& d, std::string detail);
  // d is gone, or is killed now: its children and orphans are ended.
  void EndQuit(Daemon& d);
  // The daemon did not answer: kills it and its servers through their pidfds, asks it nothing.
  void KillUnresponsive(Daemon& d);
  void KillOrphans(Daemon& d);
  void ReapIfExited(Daemon& d);
  // The uid every process of d's MPS daemons runs as.
  uint32_t RunsAs(const Daemon& d) const;
  // A control command for d's pipe directory, run as d's user, not waited on.
  Result<AsyncCommand> StartCommand(uint32_t uid, uint32_t gid, const std::string& pipe_dir,
                                    const std::string& log_dir, const std::string& command) const;
  // Moves a safe cancel on: its command's answer read, the next one started. False once it is done.
  bool Advance(Terminator& t, int64_t now_ms);
  bool ControlAlive(const Daemon& d) const;
  std::vector<std::string> NewFaultLines(Daemon& d);
  // Poll's look at one device: events out; false when the entry is to be erased.
  bool PollDaemon(int index, Daemon& d, int64_t now_ms, std::vector<sharing::Event>& events);
  void PollProbe(int index, Daemon& d, int64_t now_ms, std::vector<sharing::Event>& events,
                 bool* erase);

  MpsDaemonsOptions options_;
  Clock* clock_;
  std::map<int, Daemon> daemons_;               // by device index
  std::map<uint64_t, Terminator> terminators_;  // by job id
  std::vector<PidFd> reaping_;  // children killed or ended, reaped once they are gone
};

// The live processes whose program name (argv[0], any directory) is `program`, whose environment
// holds CUDA_MPS_PIPE_DIRECTORY=`pipe_dir`, and whose real, effective and saved uids are all `uid`,
// each held by a pidfd opened before the check.
std::vector<PidFd> MpsProcessesOf(const std::string& program, const std::string& pipe_dir,
                                  uint32_t uid);

}  // namespace pinpoint::mps
