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

// The kind of the event Insert records with each new job; the daemon names the other kinds.
inline constexpr char kSubmitEventKind[] = "submit";

struct ListFilter {
  std::vector<JobState> states;    // empty: any state
  std::optional<uint32_t> uid;     // only this user's jobs
  int limit = 0;                   // 0: no limit; newest first when limited
  int offset = 0;                  // with a limit: skip this many of the newest first (paging)
};

// Not thread-safe: one owner (the daemon's main loop) calls it.
class JobStore {
 public:
  static constexpr int kOldestSupportedVersion = 1;
  static constexpr int kCurrentVersion = 2;

  // Opens or creates the database at `path`, migrating older supported versions to the current
  // one in one transaction. A new file is created mode 0600 (records hold job environments).
  // Errors: kFailedPrecondition when the file's version is newer than kCurrentVersion or older
  // than kOldestSupportedVersion, or the file is not a SQLite database or not a job store (the
  // file is left untouched then); kIo for SQLite and filesystem failures.
  static Result<std::unique_ptr<JobStore>> Open(const std::string& path);
  ~JobStore();
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  int SchemaVersion() const;

  // Stores a new job (record.id is ignored) and returns its id, ids increasing and never reused.
  // Records a kSubmitEventKind event at record.submit_ms in the same transaction. Durable on
  // return. Errors: kInvalidArgument when a string in the record is not UTF-8; kIo.
  Result<JobId> Insert(const JobRecord& record);
  // Replaces the stored record with this id. Durable on return.
  // Errors: kNotFound; kInvalidArgument as for Insert; kIo.
  Status Update(const JobRecord& record);
  // Errors: kNotFound; kInternal when the stored row is damaged (its JSON is unreadable or
  // disagrees with its columns); kIo.
  Result<JobRecord> Get(JobId id) const;
  // Oldest first (by id) unless filter.limit is set (then newest `limit`, still returned oldest
  // first). Errors: kInvalidArgument for a negative limit; kInternal and kIo as for Get.
  Result<std::vector<JobRecord>> List(const ListFilter& filter) const;
  // How many jobs match filter.states and filter.uid (limit and offset ignored). Errors: kIo.
  Result<int64_t> Count(const ListFilter& filter) const;

  // Appends one line to a job's history. Durable on return. Errors: kNotFound when no job has
  // event.job_id; kIo.
  Status AppendEvent(const JobEvent& event);
  // The job's history in the order appended. Errors: kNotFound; kIo.
  Result<std::vector<JobEvent>> Events(JobId id) const;

 private:
  struct Impl;
  explicit JobStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pinpoint::store
