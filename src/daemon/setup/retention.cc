#include "daemon/setup/retention.h"

#include <algorithm>
#include <utility>

#include "common/file_util.h"
#include "common/remove_tree.h"

namespace pinpoint::daemon {

Retention::Retention(RetentionOptions options, store::JobStore* store, Clock* clock)
    : options_(std::move(options)), store_(store), clock_(clock) {}

Result<PurgeReport> Retention::RunIfDue() {
  int64_t now = clock_->NowMs();
  PurgeReport report;
  if (options_.retention_ms > 0 && now >= next_pass_ms_) {
    auto aged = Pass(now);
    bool more = aged.ok() && aged->more;
    next_pass_ms_ = now + (more ? options_.busy_interval_ms : options_.interval_ms);
    if (!aged.ok()) return aged;
    report = std::move(*aged);
  }
  if (options_.user_stored_bytes > 0 && now >= next_budget_ms_) {
    next_budget_ms_ = now + options_.budget_interval_ms;
    budget_more_ = false;
    auto budget = BudgetPass();
    if (!budget.ok()) return budget;
    budget_more_ = budget->more;
    if (budget_more_) next_budget_ms_ = now;
    report.purged.insert(report.purged.end(), budget->purged.begin(), budget->purged.end());
    report.entries_removed += budget->entries_removed;
    for (auto& p : budget->problems) report.problems.push_back(std::move(p));
    report.over_budget = std::move(budget->over_budget);
    report.more = report.more || budget->more;
  }
  purged_total_ += static_cast<int64_t>(report.purged.size());
  return report;
}

Status Retention::Purge(const std::vector<JobId>& jobs, PurgeReport* report) {
  if (jobs.empty()) return Status::Ok();
  auto dir = OpenDirNoFollow(options_.jobs_dir);
  if (!dir.ok() && dir.status().code() != Code::kNotFound) return dir.status();
  RemoveTreeBudget budget{options_.max_depth, options_.batch_entries};
  std::vector<JobId> ids;
  for (JobId id : jobs) {
    Status removed =
        dir.ok() ? RemoveTreeAt(dir->get(), std::to_string(id), &budget) : Status::Ok();
    if (removed.code() ==
        Code::kUnavailable) {  // the budget is spent: this job waits for the next pass
      report->more = true;
      break;
    }
    if (!removed.ok())
      report->problems.push_back("job " + std::to_string(id) + ": " + options_.jobs_dir + "/" +
                                 std::to_string(id) + " left behind: " + removed.message());
    ids.push_back(id);
  }
  report->entries_removed += options_.batch_entries - budget.entries_left;
  if (!ids.empty()) {
    auto deleted = store_->DeleteEnded(ids);
    if (!deleted.ok()) return deleted.status();
  }
  report->purged.insert(report->purged.end(), ids.begin(), ids.end());
  return Status::Ok();
}

Result<PurgeReport> Retention::Pass(int64_t now_ms) {
  store::ListFilter expired;
  expired.states = {JobState::kCompleted, JobState::kFailed, JobState::kCancelled};
  expired.end_ms_min = 1;  // a final job always has an end; a row without one is not judged
  expired.end_ms_max = now_ms - options_.retention_ms;
  expired.limit = options_.batch_jobs;
  auto ids = store_->ListIds(expired);
  if (!ids.ok()) return ids.status();
  PurgeReport report;
  PP_RETURN_IF_ERROR(Purge(*ids, &report));
  report.more = report.more || static_cast<int>(ids->size()) == options_.batch_jobs;
  return report;
}

Result<PurgeReport> Retention::BudgetPass() {
  // A few users a pass, the most over first; the others are seen a pass later.
  constexpr int kUsersPerPass = 4;
  auto over = store_->UsersOver(options_.user_stored_bytes, kUsersPerPass + 1);
  if (!over.ok()) return over.status();
  PurgeReport report;
  int jobs_left = options_.batch_jobs;
  int users = 0;
  for (const auto& [uid, ended] : *over) {
    if (uid == 0) continue;  // root's ended jobs are the site's own
    if (users == kUsersPerPass || jobs_left <= 0) {
      report.more = true;
      break;
    }
    ++users;
    // As many of the oldest as the excess takes, at the mean size of the user's ended jobs.
    uint64_t excess = ended.bytes - options_.user_stored_bytes;
    uint64_t mean =
        ended.jobs > 0 ? std::max<uint64_t>(1, ended.bytes / static_cast<uint64_t>(ended.jobs)) : 1;
    int64_t want = static_cast<int64_t>(
        std::min<uint64_t>(excess / mean + 1, static_cast<uint64_t>(jobs_left)));
    // About batch_bytes a pass (one job at least): the rest goes in the next passes, one a turn.
    int64_t by_bytes = static_cast<int64_t>(std::max<uint64_t>(1, options_.batch_bytes / mean));
    if (want > by_bytes) {
      want = by_bytes;
      report.more = true;
    }
    auto ids = store_->OldestEnded(uid, static_cast<int>(want));
    if (!ids.ok()) return ids.status();
    size_t before = report.purged.size();
    PP_RETURN_IF_ERROR(Purge(*ids, &report));
    size_t purged = report.purged.size() - before;
    jobs_left -= static_cast<int>(purged);
    if (purged > 0) {
      report.over_budget.push_back(
          "uid " + std::to_string(uid) + "'s " + std::to_string(ended.jobs) + " ended jobs took " +
          std::to_string(ended.bytes) + " bytes, over max_user_stored_bytes (" +
          std::to_string(options_.user_stored_bytes) + "): purged the oldest " +
          std::to_string(purged));
    }
    if (report.more) break;  // the removal budget is spent
  }
  // A pass that deleted nothing (a tally the jobs do not bear out, directories that will not go)
  // is not due again at once: the loop would turn on it without end.
  if (report.purged.empty()) report.more = false;
  return report;
}

}  // namespace pinpoint::daemon
