// FakeCommandRunner: a CommandRunner for tests. Runs nothing: records every spec it is given and
// answers with what the test's handler returns (by default: exit 0, no output). State is per
// instance.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "common/command_runner.h"

namespace pinpoint {

class FakeCommandRunner : public CommandRunner {
 public:
  using Handler = std::function<Result<CommandResult>(const CommandSpec&)>;

  Result<CommandResult> Run(const CommandSpec& spec) override {
    runs_.push_back(spec);
    if (handler_) return handler_(spec);
    return Exited(0);
  }

  // Scripting: how each later command ends.
  void SetHandler(Handler handler) { handler_ = std::move(handler); }

  // A command that exited with `code` after printing `out`.
  static CommandResult Exited(int code, std::string out = "") {
    CommandResult r;
    r.exit_code = code;
    r.out = std::move(out);
    return r;
  }
  // A command killed for running past its timeout.
  static CommandResult TimedOut() {
    CommandResult r;
    r.ending = CommandResult::Ending::kTimedOut;
    return r;
  }

  // Records: every spec run, in order.
  const std::vector<CommandSpec>& runs() const { return runs_; }

 private:
  std::vector<CommandSpec> runs_;
  Handler handler_;
};

}  // namespace pinpoint
