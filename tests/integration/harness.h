// Test harness: runs the real pinpointd and pinpoint binaries in a temporary directory.
// Readiness is signalled by the daemon (--ready-fd), never guessed with sleeps.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace pinpoint::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class Harness {
 public:
  // Creates a temporary directory holding state/, the socket and config.json.
  explicit Harness(std::string backend = "simulated:h100x2", std::string extra_config = "");
  ~Harness();  // kills the daemon if it still runs, removes the directory

  // Starts pinpointd and returns once it serves requests (or fails the test).
  void StartDaemon();
  // SIGKILLs the daemon and reaps it.
  void KillDaemon();
  // SIGTERMs the daemon and reaps it; returns its exit status.
  int StopDaemon();

  // Runs `pinpoint <args>` with PINPOINT_SOCKET set; blocks until it exits.
  CliResult Cli(const std::vector<std::string>& args) const;

  const std::string& dir() const { return dir_; }
  pid_t daemon_pid() const { return daemon_pid_; }
  std::string socket() const { return dir_ + "/sock"; }
  std::string daemon_log() const;

 private:
  std::string dir_;
  pid_t daemon_pid_ = -1;
  int starts_ = 0;
};

std::string BinDir();

}  // namespace pinpoint::testing
