// For tests: a Checkpointer whose runs end when the test says (Finish), each as the test wants.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "daemon/node/checkpointer.h"

namespace pinpoint::daemon {

class FakeCheckpointer : public Checkpointer {
 public:
  Status Available() const override { return available_; }
  Status Begin(JobId job, Action action, const std::vector<Target>& processes, int64_t) override {
    if (running_.count(job)) return FailedPrecondition("one runs already");
    running_[job] = {action, processes};
    begun_.push_back({job, action});
    return Status::Ok();
  }
  std::vector<Done> Poll(int64_t) override { return std::exchange(done_, {}); }
  std::vector<int> WaitFds() const override { return {}; }

  // Ends job's run: ok with every process named (a suspend's checkpointed), or failed with `error`
  // (`clean`: its processes left as they were; false: cut short, as by its deadline).
  void Finish(JobId job, bool ok, const std::string& error = "", bool clean = true) {
    auto it = running_.find(job);
    if (it == running_.end()) return;
    done_.push_back({job, it->second.first, ok, ok ? it->second.second : std::vector<Target>{},
                     error, 5, clean});
    running_.erase(it);
  }
  bool Running(JobId job) const { return running_.count(job) > 0; }
  const std::vector<Target>& Named(JobId job) const { return running_.at(job).second; }

  Status available_ = Status::Ok();
  std::vector<std::pair<JobId, Action>> begun_;

 private:
  std::map<JobId, std::pair<Action, std::vector<Target>>> running_;
  std::vector<Done> done_;
};

}  // namespace pinpoint::daemon
