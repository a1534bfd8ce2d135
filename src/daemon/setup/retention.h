// Retention: pinpointd forgets jobs that ended long ago (docs/admin.md, "retention_days"), and a
// user's oldest ended jobs while theirs take more of the store than max_user_stored_bytes. Each
// pass deletes a bounded batch of them from the store and removes their job directories, which
// their users could write, without ever acting outside them (RemoveTreeAt).
//
// Not thread-safe: the daemon's main loop is its only caller.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.h"
#include "pinpoint/status.h"
#include "store/job_store.h"

namespace pinpoint::daemon {

struct RetentionOptions {
  int64_t retention_ms = 0;  // jobs that ended longer ago than this go; 0: keep every job
  // The most one user's ended jobs may take in the store (their records' bytes); past it their
  // oldest go. Root's are not held to it. 0: no bound.
  uint64_t user_stored_bytes = 0;
  int64_t budget_interval_ms = 1000;  // between looks at what users' ended jobs take
  std::string jobs_dir;               // <state_dir>/jobs: the job directories, named by id
  int64_t interval_ms = 10 * 60'000;  // between passes once nothing is left to purge
  int64_t busy_interval_ms = 1000;    // between passes while a backlog is left
  int batch_jobs = 100;               // jobs per pass
  // Bytes of ended jobs (records and environments) one pass over max_user_stored_bytes deletes,
  // about: a user over it by a lot is brought under by several passes, one a loop turn, each
  // a bounded share of it (100 jobs of 250 KB took the loop 100 ms at once).
  uint64_t batch_bytes = 2 << 20;
  int64_t batch_entries = 5000;  // names removed from job directories per pass
  int max_depth = 64;            // directories below a job directory
};

// What one pass did.
struct PurgeReport {
  std::vector<JobId> purged;          // deleted from the store
  int64_t entries_removed = 0;        // names removed from their directories
  std::vector<std::string> problems;  // job directories (or parts) left behind, and why
  bool more = false;                  // a backlog is left for the next pass
  // Users over user_stored_bytes whose oldest ended jobs this pass purged, one line each.
  std::vector<std::string> over_budget;
};

class Retention {
 public:
  // `store` and `clock` are not owned and must outlive this.
  Retention(RetentionOptions options, store::JobStore* store, Clock* clock);

  // When retention is on and a pass is due (the first call is due at once): deletes up to
  // batch_jobs ended jobs whose end_ms is older than retention_ms and removes their directories,
  // spending at most batch_entries removals. With user_stored_bytes, every budget_interval_ms it
  // also reads what users' ended jobs take (a row each) and, for a user over it, deletes their
  // oldest ended jobs the same way: about as many as the excess takes, batch_jobs and about
  // batch_bytes at most (then the next pass is due at once: MoreDue). A job directory the budget
  // did not finish keeps its job for the next pass; one that cannot be removed (too deep, a mount
  // point, an I/O error) is left behind, named in `problems`, and its job is deleted all the same
  // so that it never blocks the batch. Store rows go in one transaction after their directories.
  // Errors: kIo from the store or the jobs directory (nothing is deleted then; the next pass
  // is due after interval_ms).
  Result<PurgeReport> RunIfDue();

  int64_t purged_total() const { return purged_total_; }
  // Whether a user is still over user_stored_bytes after the last pass, which purged what one
  // pass may (batch_bytes): the next pass is due at once, and the loop does not sleep until it.
  bool MoreDue() const { return budget_more_; }

 private:
  Result<PurgeReport> Pass(int64_t now_ms);
  Result<PurgeReport> BudgetPass();
  // Removes the directories of `jobs` (oldest first) and deletes them from the store, within one
  // pass's budget; adds to `report`.
  Status Purge(const std::vector<JobId>& jobs, PurgeReport* report);

  RetentionOptions options_;
  store::JobStore* store_;
  Clock* clock_;
  int64_t next_pass_ms_ = 0;
  int64_t next_budget_ms_ = 0;
  bool budget_more_ = false;
  int64_t purged_total_ = 0;
};

}  // namespace pinpoint::daemon
