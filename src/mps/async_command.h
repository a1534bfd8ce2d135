// AsyncCommand: one run of an MPS control command that pinpointd's main loop never waits on
// (issue 22, docs/security.md "The main loop never waits on a user"). The child runs the control
// binary as the device's user in a session of its own, its stdin already written (the question
// is in the pipe before the child exists), its output read as it comes, without waiting, up to a
// bound. It is held by a pidfd the loop puts in its poll set; past its deadline it and its session
// are killed. No shell: the binary is run directly with no arguments.
//
// Not thread-safe; owned by MpsDaemons on the main loop.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/command_runner.h"
#include "common/file_util.h"
#include "common/process.h"
#include "pinpoint/status.h"

namespace pinpoint::mps {

class AsyncCommand {
 public:
  AsyncCommand() = default;
  AsyncCommand(AsyncCommand&&) noexcept = default;
  AsyncCommand& operator=(AsyncCommand&&) noexcept = default;
  ~AsyncCommand();

  // Starts spec.argv[0] with spec.env, spec.stdin_text (at most 4 KiB), as spec.run_as; its
  // stdout (stderr merged) is kept up to spec.max_output_bytes. Deadline: now_ms +
  // spec.timeout_ms. Errors: kIo when it cannot be started (pipe, fork, pidfd).
  static Result<AsyncCommand> Start(const CommandSpec& spec, int64_t now_ms);

  // Looks at the child without waiting: reads what it printed, and reaps it once it has exited.
  // Past the deadline it is killed (its session too) and counts as timed out. Returns true once
  // it has ended (then result() holds how).
  bool Check(int64_t now_ms);
  // Kills it (its session too) now if it still runs; result() is then kInterrupted.
  void Kill();

  bool running() const { return pid_.valid(); }
  // Readable when there is something for Check to see (output, or the child's exit); -1 when
  // ended. For the main loop's poll set.
  std::vector<int> fds() const;
  const CommandResult& result() const { return result_; }

 private:
  void Drain();
  void Reap(CommandResult::Ending ending);

  PidFd pid_;
  UniqueFd out_;  // the read end of its output; closed once every writer is gone
  bool started_ = false;
  int64_t deadline_ms_ = 0;
  size_t max_output_bytes_ = 0;
  CommandResult result_;
};

// What a finished command's result means: ok, or kUnavailable naming `binary` and why (did not
// answer within timeout_ms, failed with what it printed, escaped, printed too much).
Result<std::string> CommandOutput(const CommandResult& result, const std::string& binary,
                                  int timeout_ms, size_t max_output_bytes);

}  // namespace pinpoint::mps
