// Internal to src/store: JobStore's state (job_store.h keeps it opaque), shared by the files that
// implement JobStore.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "store/job_store.h"
#include "store/sqlite.h"

namespace pinpoint::store {

struct JobStore::Impl {
  explicit Impl(Db database) : db(std::move(database)) {}
  Db db;
  dev_t dev = 0;  // the identity of the file opened, for CheckFile
  ino_t ino = 0;
  Status lost;  // once the file is gone or replaced: the error of every later write
  std::string mark_path;
  JobId reserved_ids = 0;  // ids up to this are covered by the mark file
  bool batch_open = false;
};

// A job's environment as stored (schema v9): its envs row (0: none, the environment is empty)
// and its bytes, which the job counts as its own (user_bytes).
struct StoredEnv {
  int64_t id = 0;
  int64_t bytes = 0;
};
// Stores a new environment; an empty one is none. Errors: kInvalidArgument (EncodeEnv); kIo.
Result<StoredEnv> InsertEnv(Db* db, const std::map<std::string, std::string>& env);
// The environment stored job `id` has, to share. Errors: kFailedPrecondition when no job has
// that id; kIo.
Result<StoredEnv> EnvOf(Db* db, JobId id);
// Binds env_id (NULL for none) at `index` and env_bytes at index + 1.
void BindEnv(Statement* stmt, int index, const StoredEnv& env);

// The first column of every row the statement yields, as job ids.
inline Result<std::vector<JobId>> CollectIds(Statement* stmt) {
  std::vector<JobId> ids;
  for (;;) {
    Result<bool> row = stmt->Step();
    if (!row.ok()) return row.status();
    if (!*row) return ids;
    ids.push_back(stmt->ColumnInt64(0));
  }
}

}  // namespace pinpoint::store
