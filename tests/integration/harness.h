// Test harness: runs the real pinpointd and pinpoint binaries in a temporary directory.
// Readiness is signalled by the daemon (--ready-fd), never guessed with sleeps.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
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
  ~Harness();  // kills the daemon if it still runs and the jobs it left running, removes the directory

  // Starts pinpointd and returns once it serves requests (or fails the test).
  void StartDaemon();
  // Arguments StartDaemon adds after its own (e.g. {"--device-root", dir}).
  void set_daemon_args(std::vector<std::string> args) { daemon_args_ = std::move(args); }
  // SIGKILLs the daemon and reaps it.
  void KillDaemon();
  // SIGTERMs the daemon and reaps it; returns its exit status.
  int StopDaemon();

  // Runs `pinpoint <args>` with PINPOINT_SOCKET set; blocks until it exits.
  // Runs `pinpoint args...` with `input` on its stdin (/dev/null without).
  CliResult Cli(const std::vector<std::string>& args, const std::optional<std::string>& input = std::nullopt) const;

  const std::string& dir() const { return dir_; }
  pid_t daemon_pid() const { return daemon_pid_; }
  std::string socket() const { return dir_ + "/sock"; }
  std::string daemon_log() const;

 private:
  std::string dir_;
  pid_t daemon_pid_ = -1;
  int starts_ = 0;
  std::vector<std::string> daemon_args_;
};

std::string BinDir();

// Sets an environment variable for its scope (for what the test forks, pinpointd included) and
// restores the old value, or its absence, after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// The whole file at `path` ("" when it cannot be read).
std::string Slurp(const std::string& path);
// How many '\n' `text` holds.
int CountLines(const std::string& text);

}  // namespace pinpoint::testing
