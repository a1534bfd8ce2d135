// Starting a program without a fork in the caller's address space, and waiting for it with a
// deadline.
//
// Spawn uses posix_spawn: the child runs nothing of the caller's between the clone and the exec,
// so a caller with other threads (a test, a benchmark driver) cannot have its child deadlock in
// the allocator or a lock another thread held at the fork (STYLE.md). Use it wherever a program is
// started as the caller's own user; SubprocessRunner (command_runner.h) is for a child that must
// change user first.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pinpoint/status.h"

namespace pinpoint {

// What one of the child's standard streams is.
struct SpawnStream {
  std::string path;  // opened by the child (created for writing with mode 0644)
  int fd = -1;       // or this descriptor of the caller's; neither: /dev/null

  static SpawnStream File(std::string path) { return {std::move(path), -1}; }
  static SpawnStream Fd(int fd) { return {"", fd}; }
};

struct SpawnSpec {
  // argv[0]: a path, or a name searched in the PATH of `env` (this process's PATH when env is
  // unset, /usr/bin:/bin when neither has one).
  std::vector<std::string> argv{};
  std::optional<std::vector<std::string>> env{};  // "NAME=value"; unset: this process's environment
  SpawnStream in{}, out{}, err{};
  bool err_to_out = false;     // stderr is the same open file as stdout (`err` is ignored)
  bool append_output = false;  // out and err files are opened O_APPEND instead of truncated
  // Further descriptors the child holds: {caller's fd, child's fd}, child's fd >= 3. The child
  // holds 0-2 and these, nothing else the caller had open (close-on-exec or not).
  std::vector<std::pair<int, int>> pass_fds{};
  bool new_process_group = false;  // the child leads a process group of its own
  bool new_session = false;        // the child leads a session of its own (setsid)
};

// Starts spec's program with every signal unblocked and at its default action. Returns its pid
// (a child of the caller, to be reaped with WaitChild or waitpid).
// Errors: kInvalidArgument (empty argv, a child fd below 3 in pass_fds); kNotFound (argv[0] not
// found on the PATH); kIo naming the program when it cannot be started (no such file, not
// executable, a stream that cannot be opened).
Result<pid_t> Spawn(const SpawnSpec& spec);

// This process's environment with `name` set to `value` (replacing any value it had).
std::vector<std::string> EnvironmentWith(const std::string& name, const std::string& value);

// Waits at most timeout_ms for the child `pid` to exit and reaps it: its wait status. Past the
// deadline it is killed (SIGKILL), reaped, and nullopt returned. Never blocks past
// timeout_ms + 10 s, even for a child that cannot die (then it is left unreaped).
std::optional<int> WaitChild(pid_t pid, int timeout_ms);

}  // namespace pinpoint
