// Test harness: runs the real pinpointd and pinpoint binaries in a temporary directory.
// Readiness is signalled by the daemon (--ready-fd), never guessed with sleeps.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pinpoint::testing {

// CliResult::exit_code of a CLI killed at its deadline (the test has failed by then).
inline constexpr int kCliTimedOut = 124;

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class Harness {
 public:
  // Creates a temporary directory holding state/, the socket and config.json.
  explicit Harness(std::string backend = "simulated:h100x2", std::string extra_config = "");
  ~Harness();  // kills the daemon if it still runs and the jobs it left running, removes the
               // directory

  // Starts pinpointd and returns once it serves requests (or fails the test: it died, or was not
  // ready within two minutes and was killed).
  void StartDaemon();
  // Arguments StartDaemon adds after its own (e.g. {"--device-root", dir}).
  void set_daemon_args(std::vector<std::string> args) { daemon_args_ = std::move(args); }
  // SIGKILLs the daemon and reaps it.
  void KillDaemon();
  // SIGTERMs the daemon and reaps it; returns its wait status. One that has not stopped after two
  // minutes fails the test, is killed, and -1 is returned.
  int StopDaemon();

  // Runs `pinpoint args...` with PINPOINT_SOCKET set and `input` on its stdin (/dev/null
  // without); blocks until it exits. Started with posix_spawn, so any thread may call it. One
  // still running after four minutes fails the test and is killed (exit_code kCliTimedOut).
  CliResult Cli(const std::vector<std::string>& args,
                const std::optional<std::string>& input = std::nullopt) const;

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
