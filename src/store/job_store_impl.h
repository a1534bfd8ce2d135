// Internal to src/store: JobStore's state (job_store.h keeps it opaque), shared by the files that
// implement JobStore.
#pragma once

#include <sys/types.h>

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
  Status lost;    // once the file is gone or replaced: the error of every later write
  std::string mark_path;
  JobId reserved_ids = 0;  // ids up to this are covered by the mark file
  bool batch_open = false;
};

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
