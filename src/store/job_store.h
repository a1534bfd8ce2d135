// JobStore: the durable job queue and history, in SQLite (WAL, synchronous=FULL).
// Schema versions and their migrations: docs/store.md. Every write is durable when it returns.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pinpoint/job.h"
#include "pinpoint/status.h"

namespace pinpoint::store {

// One line of a job's history (schema v2 and later).
struct JobEvent {
  JobId job_id = 0;
  int64_t time_ms = 0;
  std::string kind;    // "submit", "start", "end", "cancel-request", "adopt", ...
  std::string detail;  // one line for people
};

struct ListFilter {
  std::vector<JobState> states;    // empty: any state
  std::optional<uint32_t> uid;     // only this user's jobs
  int limit = 0;                   // 0: no limit; newest first when limited
};

// Not thread-safe: one owner (the daemon's main loop) calls it.
class JobStore {
 public:
  static constexpr int kOldestSupportedVersion = 1;
  static constexpr int kCurrentVersion = 2;

  // Opens or creates the database at `path`, migrating older supported versions to the current
  // one in one transaction. Errors: kFailedPrecondition when the file's version is newer than
  // kCurrentVersion or older than kOldestSupportedVersion; kIo for SQLite failures.
  static Result<std::unique_ptr<JobStore>> Open(const std::string& path);
  ~JobStore();
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  int SchemaVersion() const;

  // Stores a new job (record.id is ignored) and returns its id, ids increasing. Durable on return.
  Result<JobId> Insert(const JobRecord& record);
  // Replaces the stored record with this id. Errors: kNotFound.
  Status Update(const JobRecord& record);
  // Errors: kNotFound.
  Result<JobRecord> Get(JobId id) const;
  // Oldest first (by id) unless filter.limit is set (then newest `limit`, still returned oldest
  // first).
  Result<std::vector<JobRecord>> List(const ListFilter& filter) const;

  Status AppendEvent(const JobEvent& event);
  Result<std::vector<JobEvent>> Events(JobId id) const;

 private:
  struct Impl;
  explicit JobStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pinpoint::store
