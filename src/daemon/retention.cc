#include "daemon/retention.h"

#include <utility>

#include "common/file_util.h"
#include "common/remove_tree.h"

namespace pinpoint::daemon {

Retention::Retention(RetentionOptions options, store::JobStore* store, Clock* clock)
    : options_(std::move(options)), store_(store), clock_(clock) {}

Result<PurgeReport> Retention::RunIfDue() {
  if (options_.retention_ms <= 0) return PurgeReport{};
  int64_t now = clock_->NowMs();
  if (now < next_pass_ms_) return PurgeReport{};
  auto report = Pass(now);
  bool more = report.ok() && report->more;
  next_pass_ms_ = now + (more ? options_.busy_interval_ms : options_.interval_ms);
  if (report.ok()) purged_total_ += static_cast<int64_t>(report->purged.size());
  return report;
}

Result<PurgeReport> Retention::Pass(int64_t now_ms) {
  store::ListFilter expired;
  expired.states = {JobState::kCompleted, JobState::kFailed, JobState::kCancelled};
  expired.end_ms_min = 1;  // a final job always has an end; a row without one is not judged
  expired.end_ms_max = now_ms - options_.retention_ms;
  expired.limit = options_.batch_jobs;
  auto jobs = store_->List(expired);
  if (!jobs.ok()) return jobs.status();
  PurgeReport report;
  if (jobs->empty()) return report;
  auto dir = OpenDirNoFollow(options_.jobs_dir);
  if (!dir.ok() && dir.status().code() != Code::kNotFound) return dir.status();
  RemoveTreeBudget budget{options_.max_depth, options_.batch_entries};
  std::vector<JobId> ids;
  for (const JobRecord& job : *jobs) {
    Status removed = dir.ok() ? RemoveTreeAt(dir->get(), std::to_string(job.id), &budget) : Status::Ok();
    if (removed.code() == Code::kUnavailable) {  // the budget is spent: this job waits for the next pass
      report.more = true;
      break;
    }
    if (!removed.ok())
      report.problems.push_back("job " + std::to_string(job.id) + ": " + options_.jobs_dir + "/" +
                                std::to_string(job.id) + " left behind: " + removed.message());
    ids.push_back(job.id);
  }
  report.entries_removed = options_.batch_entries - budget.entries_left;
  if (!ids.empty()) {
    auto deleted = store_->DeleteEnded(ids);
    if (!deleted.ok()) return deleted.status();
  }
  report.purged = std::move(ids);
  report.more = report.more || static_cast<int>(jobs->size()) == options_.batch_jobs;
  return report;
}

}  // namespace pinpoint::daemon
