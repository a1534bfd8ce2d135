// CommandRunner: runs a program to its end and collects what it printed, behind an interface so
// the code that runs tools (MPS control commands, the benchmark driver's helpers) can be tested
// with FakeCommandRunner (fake_command_runner.h), as ninja's CommandRunner is.
//
// No shell is involved: argv[0] is run directly (searched in the PATH of spec.env when it has no
// '/'), and no argument is ever interpreted.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pinpoint/status.h"

namespace pinpoint {

// The user a command runs as (pinpointd is root): groups, then gid, then uid are set before exec.
struct RunAs {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> groups;  // supplementary groups; empty: only gid
};

struct CommandSpec {
  std::vector<std::string> argv{};  // argv[0] is the program
  std::vector<std::string> env{};   // its whole environment, "NAME=value"
  std::string stdin_text{};         // written to its stdin, which is then closed
  int timeout_ms = 10'000;          // then it and its process group are killed (SIGKILL)
  // At most this many bytes of each stream are kept; the rest is read and dropped (truncated).
  size_t max_output_bytes = 1 << 20;
  bool merge_stderr = false;      // stderr goes where stdout goes (CommandResult::out)
  std::optional<RunAs> run_as{};  // none: as this process's user
  // Checked at least every 200 ms: when it turns true the command is killed (kInterrupted).
  const std::atomic<bool>* stop = nullptr;
};

struct CommandResult {
  enum class Ending {
    kExited,       // exit_code is set; 127: the program could not be run (the reason on stderr)
    kSignaled,     // killed by term_signal
    kTimedOut,     // ran past timeout_ms: killed
    kInterrupted,  // *stop turned true: killed
  };
  Ending ending = Ending::kExited;
  int exit_code = -1;  // -1 unless kExited
  int term_signal = 0;
  std::string out;
  std::string err;  // empty with merge_stderr
  bool out_truncated = false;
  bool err_truncated = false;

  bool Succeeded() const { return ending == Ending::kExited && exit_code == 0; }
};

// Not thread-safe per instance; instances are independent.
class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Runs spec to its end: until the program exits (a process it leaves behind holding its output
  // open does not delay this), spec.timeout_ms passes or *spec.stop turns true. A program that
  // fails, cannot be run or is killed is a CommandResult, not an error.
  // Errors: kInvalidArgument (empty argv), kIo (no pipe, fork or poll).
  virtual Result<CommandResult> Run(const CommandSpec& spec) = 0;
};

// The real runner: fork and exec. The child gets its own process group (killed as a whole on a
// timeout or stop), every signal unblocked, only descriptors 0-2, and run_as's user (exit code
// 126 when that fails). It is reaped before Run returns.
class SubprocessRunner : public CommandRunner {
 public:
  Result<CommandResult> Run(const CommandSpec& spec) override;
};

}  // namespace pinpoint
