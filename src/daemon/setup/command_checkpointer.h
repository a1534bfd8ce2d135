// The real Checkpointer (daemon/node/checkpointer.h): pinpoint-checkpoint (gpu/checkpoint_main.cc)
// run as root for each suspend and resume, never waited on (mps::AsyncCommand: held by a pidfd in
// the loop's poll set, its output bounded, killed with its session past its deadline).
// Not thread-safe: the daemon's main loop is its only caller.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "daemon/node/checkpointer.h"
#include "mps/async_command.h"

namespace pinpoint::daemon {

class CommandCheckpointer : public Checkpointer {
 public:
  // The most processes one job's suspend names: a job with more is not suspended.
  static constexpr size_t kMaxProcesses = 512;
  // `binary`: pinpoint-checkpoint's path; each run is killed `timeout_ms` after it began.
  CommandCheckpointer(std::string binary, int64_t timeout_ms)
      : binary_(std::move(binary)), timeout_ms_(timeout_ms) {}

  Status Available() const override;
  Status Begin(JobId job, Action action, const std::vector<Target>& processes,
               int64_t now_ms) override;
  std::vector<Done> Poll(int64_t now_ms) override;
  std::vector<int> WaitFds() const override;

 private:
  struct Run {
    Action action = Action::kSuspend;
    mps::AsyncCommand command;
    std::map<int64_t, uint64_t> starts;  // each process named -> its start ticks
    int64_t began_ms = 0;
  };
  // What a run that ended says: its report read (the processes it checkpointed), or why not.
  Done Read(JobId job, const Run& run, int64_t now_ms) const;

  std::string binary_;
  int64_t timeout_ms_;
  std::map<JobId, Run> runs_;
};

}  // namespace pinpoint::daemon
