// How a JobRecord maps to a row of the jobs table: the queryable fields as columns and the whole
// record as JSON in `record`. The JSON is the truth; the columns are copies kept for queries.
#pragma once

#include <string>

#include "pinpoint/job.h"
#include "pinpoint/status.h"
#include "store/sqlite.h"

namespace pinpoint::store {

// The columns DecodeJobRow reads, in its order; for "SELECT <kJobColumns> FROM jobs ...".
inline constexpr char kJobColumns[] =
    "id, uid, user, state, reason, priority, submit_ms, start_ms, end_ms, record";

// The record as the JSON text stored in `record`.
// Errors: kInvalidArgument when it cannot be encoded (a string that is not UTF-8).
Result<std::string> EncodeRecord(const JobRecord& record);

// Binds parameters ?1..?9 as uid, user, state, reason, priority, submit_ms, start_ms, end_ms,
// record (= record_json), the order of the jobs table's columns after id.
void BindJobColumns(Statement* stmt, const JobRecord& record, const std::string& record_json);

// Rebuilds the record on the current row of a "SELECT <kJobColumns>" statement.
// Errors: kInternal when the JSON is unreadable or disagrees with a column (hand-edited or
// damaged data), naming the job and the field.
Result<JobRecord> DecodeJobRow(const Statement& row);

}  // namespace pinpoint::store
