// Node's time limits, dependencies and user limits (node.h; docs/scheduling.md). What they
// decide is decided elsewhere: sched/ for dependencies and user limits, lifecycle.h for the
// time-limit deadline; here the daemon feeds them and acts.
#include <algorithm>

#include "common/log.h"
#include "daemon/lifecycle.h"
#include "daemon/node.h"

namespace pinpoint::daemon {

void Node::EndNeverStarting(const std::vector<sched::Wait>& never) {
  int64_t now = deps_.clock->NowMs();
  for (const sched::Wait& w : never) {
    auto it = jobs_.find(w.id);
    if (it == jobs_.end() || it->second.state != JobState::kPending) continue;
    JobRecord& job = it->second;
    JobRecord before = job;
    lifecycle::NeverStarts(job, w.reason, w.detail, now);
    Status s = jobs_.Persist(job, "end", job.detail);
    if (!s.ok()) {
      log::Error("job {}: cannot record that it never starts, leaving it pending: {}", job.id, s.ToString());
      job = std::move(before);
      continue;
    }
    log::Info("job {} never starts: {}", job.id, job.detail);
    dirty_ = true;  // jobs that depend on it are judged again
  }
}

void Node::EnforceTimeLimit(JobRecord& job, int64_t now_ms) {
  std::optional<int64_t> deadline = lifecycle::TimeLimitDeadlineMs(job);
  if (!deadline || now_ms < *deadline) return;
  // A job already being stopped or cancelled is left alone: the first stop wins.
  StopJob(job, Reason::kTimeLimit, lifecycle::TimeLimitDetail(job));
}

}  // namespace pinpoint::daemon
