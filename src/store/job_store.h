// JobStore: the durable job queue and history, in SQLite (WAL, synchronous=FULL).
// Schema versions and their migrations: docs/store.md. Every write is durable when it returns.
// What it guarantees when the file is lost or damaged: docs/store.md, "Recovering a damaged
// store".
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/job_record.h"
#include "partition/partition.h"
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
  std::vector<JobState> states;       // empty: any state
  std::optional<uint32_t> uid;        // only this user's jobs
  std::optional<int64_t> end_ms_min;  // only jobs with end_ms >= this
  std::optional<int64_t> end_ms_max;  // only jobs with end_ms < this
  // Only jobs whose id is in one of these inclusive ranges (empty: any id). At most a few hundred:
  // each is a bound pair of the query.
  std::vector<std::pair<JobId, JobId>> id_ranges = {};
  int limit = 0;   // 0: no limit; newest first when limited
  int offset = 0;  // with a limit: skip this many of the newest first (paging)
  // Jobs without their environments (request.env empty): a listing of many jobs holds one
  // environment at a time while it decodes, never all of them.
  bool omit_env = false;
};

// A submit's idempotency key (schema v3 and later): a retried submit with the same key from the
// same submitting uid finds the first job instead of storing a second one.
struct IdempotencyKey {
  uint32_t submit_uid = 0;  // the uid that submitted (the caller, not an as_user)
  std::string key;          // non-empty; the daemon bounds its length and characters
};

// What one user's ended jobs take in the store (schema v5 and later): how many, and the bytes of
// their records.
struct EndedBytes {
  int64_t jobs = 0;
  uint64_t bytes = 0;
};

// A change pinpoint made to a mig-dynamic GPU's MIG layout (schema v7 and later; issue 26).
struct MigChange {
  int64_t at_ms = 0;
  int gpu = 0;                                                  // NVML index
  partition::MigAction action = partition::MigAction::kCreate;  // stored as its name
  std::string profile;                                          // "1g.10gb"
  int start = 0;             // the placement's first memory slice
  uint32_t instance_id = 0;  // the GPU instance (a create's: the id NVML gave it; 0 when it failed)
  std::string uuid;          // its MIG device ("" when unknown)
  JobId for_job =
      0;  // the waiting job it was for: made for it, or destroyed for its room (0: none)
  std::string result = "ok";  // "ok", or the error's one line
  bool operator==(const MigChange&) const = default;
};
// The newest MIG changes the store keeps; older ones are deleted as new ones come.
inline constexpr int64_t kMigChangesKept = 10000;

struct StoreOptions {
  // Ids handed out are above this (the largest jobs/<id> directory of the daemon's state), so a
  // store that was lost or restored from a backup never names an existing job directory again.
  JobId min_id_exclusive = 0;
};

class Transaction;

// Not thread-safe: one owner (the daemon's main loop) calls it.
class JobStore {
  struct Impl;

 public:
  static constexpr int kOldestSupportedVersion = 1;
  static constexpr int kCurrentVersion = 9;

  // Opens or creates the database at `path`, checks it (PRAGMA quick_check), and migrates older
  // supported versions to the current one in one transaction. A new file is created mode 0600
  // (records hold job environments). Ids continue above the largest of: the store's own
  // sequence, the high-water mark file IdMarkPath(path) (id_mark.h), options.min_id_exclusive.
  // Errors: kFailedPrecondition when the file's version is newer than kCurrentVersion or older
  // than kOldestSupportedVersion, or the file is not a SQLite database, not a job store, or
  // damaged, or the mark file is damaged (the file is left untouched then; the message names
  // the file and says where the recovery steps are); kIo for SQLite and filesystem failures.
  static Result<std::unique_ptr<JobStore>> Open(const std::string& path,
                                                const StoreOptions& options = {});
  ~JobStore();
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  int SchemaVersion() const;

  // Stores a new job (record.id is ignored) and returns its id, ids increasing and never reused
  // (the high-water mark is durable before the id is returned). Records a kSubmitEventKind event
  // at record.submit_ms in the same transaction, and the idempotency key when given. Durable on
  // return. Errors: kInvalidArgument when a string in the record is not UTF-8; kFailedPrecondition
  // when the key is already stored (look it up with FindByIdempotencyKey first); kIo, and the
  // error of CheckFile once the file is lost.
  Result<JobId> Insert(const JobRecord& record, const std::optional<IdempotencyKey>& key = {});
  // Stores a job array's rest (daemon/jobs/array_rest.h: one record for the array's `count` tasks)
  // and reserves the ids of its tasks: the record gets a new id, the array's, and the next
  // count - 1 ids are handed to no other job (InsertAt stores the tasks under them). The record's
  // array.array_id becomes its id. Records one submit event; the key, when given, goes with it, so
  // FindByIdempotencyKey finds the array by it. Cost: one durable commit whatever `count`.
  // Errors: Insert's, and kInvalidArgument for a count below 1.
  Result<JobId> InsertArray(const JobRecord& rest, int count,
                            const std::optional<IdempotencyKey>& key = {});
  // Stores `record` under its own id, one InsertArray reserved that no stored job has (a task
  // taken out of its array's rest, or the rest moved on to its next task), with a submit event at
  // record.submit_ms. Durable on return (inside a Batch: when the batch commits). With `env_of`,
  // the record's request.env is not written: the job shares the one stored job env_of has (an
  // array's rest and its tasks share one environment; the caller knows they are the same).
  // Errors: kFailedPrecondition when a job has that id already or it was never reserved, or
  // env_of is not stored; kInvalidArgument as for Insert; kIo, and CheckFile's error.
  Status InsertAt(const JobRecord& record, JobId env_of = 0);
  // The stored rest (ArrayTask::pending set) of the job array whose ids include `id`, found from
  // the stored job with the greatest id up to `id`: nullopt when that is no task of an array
  // holding `id`, or the array has no rest at or below `id`. Whether the rest stands for `id` is
  // the caller's to check. Cost: two lookups of the primary key, one range scan within the array.
  // Errors: kInternal as for Get; kIo.
  Result<std::optional<JobRecord>> FindArrayRest(JobId id) const;
  // The job stored with this key, if any. Errors: kInternal as for Get; kIo.
  Result<std::optional<JobRecord>> FindByIdempotencyKey(const IdempotencyKey& key) const;
  // Replaces the stored record with this id and, when `event` is given, appends it to the job's
  // history, in one transaction. Durable on return (inside a Batch: when the batch commits).
  // The record's request.env is not written: the stored one stays (an environment is fixed at
  // submit; a record read without it may be given).
  // Errors: kNotFound; kInvalidArgument as for Insert; kIo, and CheckFile's error.
  Status Update(const JobRecord& record, const std::optional<JobEvent>& event = std::nullopt);
  // Errors: kNotFound; kInternal when the stored row is damaged (its JSON is unreadable or
  // disagrees with its columns); kIo. Without `with_env` the record's request.env is empty: SQLite
  // drops it before the record is decoded, so a record of a large environment costs its
  // environment's bytes once in SQLite's parser, not a decode into a map (listings, waits).
  Result<JobRecord> Get(JobId id, bool with_env = true) const;
  // Oldest first (by id) unless filter.limit is set (then newest `limit`, still returned oldest
  // first). Errors: kInvalidArgument for a negative limit; kInternal and kIo as for Get.
  Result<std::vector<JobRecord>> List(const ListFilter& filter) const;
  // The ids List would return, in the same order, without reading a record: the page is found
  // in the listing index (schema version 4), so its cost does not grow with the offset's records.
  // Errors: kInvalidArgument for a negative limit; kIo.
  Result<std::vector<JobId>> ListIds(const ListFilter& filter) const;
  // How many jobs match filter.states and filter.uid (limit and offset ignored). Errors: kIo.
  Result<int64_t> Count(const ListFilter& filter) const;

  // Deletes these jobs and their history in one transaction, durable on return; only jobs in a
  // final state (an active job named here is kept). Ids stay used: no later job gets one of
  // them. Returns how many jobs were deleted (a missing id counts none).
  // Errors: kIo, and CheckFile's error (then nothing is deleted).
  Result<int64_t> DeleteEnded(const std::vector<JobId>& ids);

  // What `uid`'s ended jobs take, kept as records are written (a row's read, not a sum).
  // Errors: kIo.
  Result<EndedBytes> EndedBytesOf(uint32_t uid) const;
  // The users whose ended jobs take more than `max_bytes`, most first, at most `limit` of them.
  // Errors: kIo.
  Result<std::vector<std::pair<uint32_t, EndedBytes>>> UsersOver(uint64_t max_bytes,
                                                                 int limit) const;
  // The ids of `uid`'s oldest ended jobs, oldest first, at most `limit`. Errors: kIo.
  Result<std::vector<JobId>> OldestEnded(uint32_t uid, int limit) const;
  // The state of the first job by id in [first, end) whose state is not `state`; nullopt when
  // every stored job there is in `state` (a job array's outcome: its tasks' ids are a range).
  // Cost: one range scan of the primary key, stopped at the first such job. Errors: kIo.
  Result<std::optional<JobState>> FirstStateOtherThan(JobId first, JobId end, JobState state) const;

  // Appends one line to a job's history. Durable on return. Errors: kNotFound when no job has
  // event.job_id; kIo, and CheckFile's error.
  Status AppendEvent(const JobEvent& event);
  // MIG layout changes (job_store_mig.cc): appended in one transaction, keeping the newest
  // kMigChangesKept; the newest `limit` of them, oldest first. Errors: kIo.
  Status AppendMigChanges(const std::vector<MigChange>& changes);
  Result<std::vector<MigChange>> RecentMigChanges(int limit) const;
  // GPUs held after their job ended (job_store_holds.cc, schema v8): the ended job `id` whose
  // GPUs a process still holds since since_ms (set again: the time is kept); its row gone; every
  // row, by job id. Durable on return. Errors: kIo.
  Status PutGpuHold(JobId id, int64_t since_ms);
  Status DeleteGpuHold(JobId id);
  Result<std::vector<std::pair<JobId, int64_t>>> GpuHolds() const;
  // The job's history in the order appended. Errors: kNotFound; kIo.
  Result<std::vector<JobEvent>> Events(JobId id) const;

  // Groups writes into one transaction, so that a pass of the daemon that starts or ends many
  // jobs pays one fsync instead of one per write. Every write made through the store while the
  // batch is open joins it. Each write still succeeds or fails as a whole (a failed write undoes
  // only itself), but none is durable when it returns: all are when Commit returns ok, and all
  // are undone when Commit fails or the batch is destroyed uncommitted (and every write after
  // SQLite has undone the batch on its own, e.g. on a full disk, fails with kIo). Reads see the
  // batch's writes. One batch at a time; it must not outlive the store.
  class Batch {
   public:
    Batch(Batch&& other) noexcept;
    Batch& operator=(Batch&&) = delete;
    ~Batch();
    // Errors: kIo (nothing written in the batch is stored then).
    Status Commit();

   private:
    friend class JobStore;
    Batch(Impl* impl, std::unique_ptr<Transaction> txn);
    Impl* impl_ = nullptr;  // null once committed or moved from
    std::unique_ptr<Transaction> txn_;
  };
  // Errors: kFailedPrecondition when a batch is open already; kIo, and CheckFile's error.
  Result<Batch> BeginBatch();

  // Whether the file at the store's path is still the one opened (same device and inode).
  // Once it is not (deleted, or replaced by another file) every later write fails with the same
  // kIo error naming the problem, rather than going to a file nobody will read again;
  // reads go on from the open file. Called before each write and, by the daemon, periodically.
  // Cost: one stat(2).
  Status CheckFile();

 private:
  // CheckFile, and kIo when a batch is open but SQLite has undone its transaction.
  Status CheckWritable();
  explicit JobStore(std::unique_ptr<Impl> impl);
  // Insert and InsertArray: the record in one transaction; `reserve` ids from its own on are
  // handed to no later Insert, and a reserve above 1 makes it an array (array.array_id is its id).
  Result<JobId> InsertJob(const JobRecord& record, const std::optional<IdempotencyKey>& key,
                          int reserve);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pinpoint::store
