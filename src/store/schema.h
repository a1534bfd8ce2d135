// The job store's schema versions and the steps between them (docs/store.md describes each).
// The version lives in the file header (PRAGMA user_version); the header's application_id marks
// the file as a pinpoint job store.
#pragma once

#include <cstdint>
#include <span>

#include "pinpoint/status.h"
#include "store/sqlite.h"

namespace pinpoint::store {

inline constexpr int kOldestSupportedSchemaVersion = 1;
inline constexpr int kCurrentSchemaVersion = 9;
// "PPJS". Written by the version 1 step; a file with a version but another id is not ours.
inline constexpr int32_t kApplicationId = 0x50504A53;

// One step: SQL with no values that takes a file from version `to_version - 1` to `to_version`.
// It does not set user_version; MigrateTo does.
struct Migration {
  int to_version;
  const char* sql;
  // Run after `sql`, in the same transaction, for a step that rewrites records (null: none).
  Status (*rewrite)(Db* db) = nullptr;
};

// Every step, oldest first: step i leads to version i + 1. Steps are never edited once released,
// and never dropped: a new file is built by the same steps that upgrade an old one.
std::span<const Migration> Migrations();

// Reads the file's schema version; 0 for a new empty file.
// Errors: kFailedPrecondition when the file is not a SQLite database; kIo for other failures.
Result<int> ReadSchemaVersion(Db* db);

// Checks that this build may open a file at `version`: kOldestSupportedSchemaVersion through
// kCurrentSchemaVersion and carrying kApplicationId, or 0 with no tables (a new file).
// Errors: kFailedPrecondition with one line naming the file's and the supported versions; kIo.
Status CheckSchemaVersion(Db* db, int version);

// Applies, in one write transaction, each step after the file's version up to and including
// `target_version`, then sets user_version. The version is re-read inside the transaction, so
// two processes opening one new file migrate it once. JobStore::Open passes
// kCurrentSchemaVersion; tests pass older versions to build old files.
// Errors: kInvalidArgument for a target that is not a known version; kFailedPrecondition when
// the file is already past target_version; kIo (nothing is changed then).
Status MigrateTo(Db* db, int target_version);

}  // namespace pinpoint::store
