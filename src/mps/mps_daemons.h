// MpsDaemons: the real MpsControl. Runs one `nvidia-cuda-mps-control -f` per device for the Unix
// user whose jobs use it, with CUDA_VISIBLE_DEVICES set to the device's UUID and pipe and log
// directories <mps_root>/dev<device index>/<uid>/{pipe,log}, owned by that user, mode 0700. Started when the
// first slice lands on the device, quit when idle for idle_quit_ms, checked on every Poll
// (control daemon alive, new fatal-fault lines in the server log), restarted after a crash.
// Commands (get_server_list, get_client_list, terminate_client, quit) go through the control
// binary with the daemon's pipe directory, as NVIDIA documents, run by options.runner as the
// daemon's user, with a timeout and a bound on what they print.
//
// Trust (docs/security.md): the pipe and log directories belong to the user, so nothing read from
// them is trusted. The control daemon runs in the foreground as pinpointd's child and is held by
// a pidfd from its fork on; no pid is ever read from a file. A daemon left by an earlier pinpointd
// is adopted, and a dead daemon's servers are killed, only when /proc shows every uid of the
// process to be the device user's, checked through a pidfd, so root never signals a process the
// user could not signal themselves. Fatal-fault lines in the server log are claims of that user
// (MpsEvent::uid), read with bounded, non-following reads (ServerLogScanner).
#pragma once

#include <map>
#include <set>

#include "common/clock.h"
#include "common/command_runner.h"
#include "common/process.h"
#include "mps/mps_control.h"
#include "mps/server_log_scanner.h"

namespace pinpoint::mps {

struct MpsDaemonsOptions {
  std::string mps_root;                              // absolute
  std::string control_binary = "nvidia-cuda-mps-control";
  int64_t idle_quit_ms = 60000;                      // 0: never quit an idle daemon
  bool switch_user = false;                          // run each daemon as its user (pinpointd is root)
  int command_timeout_ms = 10000;
  // A daemon with clients is asked `get_server_list` this often, by a child process the main loop
  // never waits on (Poll looks at it); one that has not answered within probe_timeout_ms is
  // unresponsive (MpsEvent::kDaemonUnresponsive). 0: no probes.
  int64_t probe_interval_ms = 2000;
  int64_t probe_timeout_ms = 5000;
  // Runs the control commands (not the daemons). Not owned; null: a SubprocessRunner.
  CommandRunner* runner = nullptr;
};

// The most a control command may print; an answer that is longer is refused.
inline constexpr size_t kMaxCommandOutputBytes = 64 * 1024;

class MpsDaemons : public MpsControl {
 public:
  MpsDaemons(MpsDaemonsOptions options, Clock* clock);
  ~MpsDaemons() override = default;

  // Whether the control binary can be run here ("" = yes, else why not).
  static std::string Unusable(const std::string& control_binary);

  Result<std::map<std::string, std::string>> PrepareClient(const ClientSlice& slice) override;
  void ReleaseClient(const ClientSlice& slice) override;
  Status TerminateClients(const ClientSlice& slice, const std::vector<int64_t>& pids) override;
  std::vector<MpsEvent> Poll(int64_t now_ms) override;
  void ResetDevice(int device_index) override;
  std::vector<MpsDaemonInfo> Describe() const override;

  // Starts the device's control daemon for slice.uid now, with no client yet (config
  // mps_prestart_user), and keeps it even when idle. Errors as PrepareClient.
  Status Prestart(const ClientSlice& slice);

  // Quits every daemon it started (pinpointd does not call this on a normal stop: running jobs
  // keep their servers; tests and admins do).
  void QuitAll();

 private:
  struct Daemon {
    std::string uuid;
    uint32_t uid = 0;
    uint32_t gid = 0;
    std::string pipe_dir;
    std::string log_dir;
    PidFd control;        // the control daemon; invalid while none runs
    bool child = false;   // started by this process (reaped here), not adopted
    int clients = 0;
    int64_t idle_since_ms = 0;
    // Where MPS reports a client's fatal fault: the foreground control daemon's output (servers
    // inherit it) and, where MPS writes one, server.log. Both are the user's.
    ServerLogScanner foreground_log{""};
    ServerLogScanner server_log{""};
    std::vector<PidFd> orphan_servers;  // servers left by a control daemon that died
    int restarts = 0;
    bool keep = false;  // prestarted: never quit for being idle
    // The health probe in flight: a child running the control binary, held by a pidfd. Looked at
    // by Poll without waiting; invalid when none runs.
    PidFd probe;
    int64_t probe_started_ms = 0;
    int64_t next_probe_ms = 0;
  };

  Status Start(int device_index, Daemon& d);
  // Runs the control binary in the foreground as d's user and waits until its control socket
  // exists. Errors: kUnavailable with the daemon's last words, or when it does not answer.
  // (Not through the runner: the daemon outlives the call, held by a pidfd.)
  Status Spawn(Daemon& d);
  void Quit(Daemon& d);  // best effort: failures are logged
  // Starts d's health probe (no wait). Errors: kIo when it cannot be started.
  Status StartProbe(Daemon& d);
  // Ends d's probe, reaping it: killed first when `kill`.
  void EndProbe(Daemon& d, bool kill);
  // The daemon did not answer: kills it and its servers through their pidfds, asks it nothing.
  void KillUnresponsive(Daemon& d);
  void KillOrphans(Daemon& d);
  void ReapIfExited(Daemon& d);
  // The uid every process of d's MPS daemons runs as.
  uint32_t RunsAs(const Daemon& d) const;
  // What a control command printed. Errors: kUnavailable when it fails, does not answer within
  // command_timeout_ms or prints more than kMaxCommandOutputBytes; kIo when it cannot be run.
  Result<std::string> Command(const Daemon& d, const std::string& command) const;
  bool ControlAlive(const Daemon& d) const;
  std::vector<std::string> NewFaultLines(Daemon& d);

  MpsDaemonsOptions options_;
  Clock* clock_;
  SubprocessRunner own_runner_;
  CommandRunner* runner_;  // options_.runner or own_runner_
  std::map<int, Daemon> daemons_;  // by device index
  std::vector<PidFd> reaping_;     // children killed or ended, reaped once they are gone
};

// The live processes whose program name (argv[0], any directory) is `program`, whose environment
// holds CUDA_MPS_PIPE_DIRECTORY=`pipe_dir`, and whose real, effective and saved uids are all `uid`,
// each held by a pidfd opened before the check.
std::vector<PidFd> MpsProcessesOf(const std::string& program, const std::string& pipe_dir, uint32_t uid);

}  // namespace pinpoint::mps
