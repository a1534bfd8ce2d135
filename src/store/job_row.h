// How a JobRecord maps to a row of the jobs table: the queryable fields as columns and the whole
// record in `record` (record_codec.h). The record is the truth; the columns are copies kept for
// queries.
#pragma once

#include <string>

#include "common/job_record.h"
#include "pinpoint/job.h"
#include "pinpoint/status.h"
#include "store/record_codec.h"
#include "store/sqlite.h"

namespace pinpoint::store {

// The columns DecodeJobRow reads, in its order; for "SELECT <kJobColumns> FROM jobs ...". The
// last two are the job's environment (schema v9 keeps it apart, in envs): its row's id, its text.
inline constexpr char kJobColumns[] =
    "id, uid, user, state, reason, priority, submit_ms, start_ms, end_ms, record, env_id, "
    "(SELECT text FROM envs WHERE envs.id = jobs.env_id)";
// The same columns without the environment (JobStore::Get without env): request.env is empty.
inline constexpr char kJobColumnsWithoutEnv[] =
    "id, uid, user, state, reason, priority, submit_ms, start_ms, end_ms, record, NULL, NULL";
// The same for a file before schema version 9 (its migration steps), whose records hold their
// environments.
inline constexpr const char* kJobColumnsBeforeV9 = kJobColumnsWithoutEnv;

// Binds parameters ?1..?9 as uid, user, state, reason, priority, submit_ms, start_ms, end_ms,
// record (= record_json, from EncodeRecord), the order of the jobs table's columns after id.
void BindJobColumns(Statement* stmt, const JobRecord& record, const std::string& record_json);

// Rebuilds the record on the current row of a "SELECT <kJobColumns>" statement.
// Errors: kInternal when the record is unreadable (DecodeRecord) or disagrees with a column
// (hand-edited or damaged data), naming the job and the field.
Result<JobRecord> DecodeJobRow(const Statement& row);

}  // namespace pinpoint::store
