#include "store/job_row.h"

#include <utility>

namespace pinpoint::store {
namespace {

// Indexes of kJobColumns.
enum Column {
  kId,
  kUid,
  kUser,
  kState,
  kReason,
  kPriority,
  kSubmitMs,
  kStartMs,
  kEndMs,
  kRecord,
  kEnvId,
  kEnv
};

Status Disagree(int64_t id, const char* field, const std::string& column,
                const std::string& record) {
  return Internal("job " + std::to_string(id) + " in the store: column " + field + " is '" +
                  column + "' but its record says '" + record + "'");
}

Status CheckColumns(const Statement& row, const JobRecord& r) {
  auto int_column = [&](Column c, const char* name, int64_t value) -> Status {
    if (row.ColumnInt64(c) == value) return Status::Ok();
    return Disagree(r.id, name, std::to_string(row.ColumnInt64(c)), std::to_string(value));
  };
  auto text_column = [&](Column c, const char* name, const std::string& value) -> Status {
    if (row.ColumnText(c) == value) return Status::Ok();
    return Disagree(r.id, name, row.ColumnText(c), value);
  };
  PP_RETURN_IF_ERROR(int_column(kId, "id", r.id));
  PP_RETURN_IF_ERROR(int_column(kUid, "uid", r.uid));
  PP_RETURN_IF_ERROR(text_column(kUser, "user", r.user));
  PP_RETURN_IF_ERROR(text_column(kState, "state", StoredStateName(r.state)));
  PP_RETURN_IF_ERROR(text_column(kReason, "reason", StoredReasonName(r.reason)));
  PP_RETURN_IF_ERROR(int_column(kPriority, "priority", r.request.priority));
  PP_RETURN_IF_ERROR(int_column(kSubmitMs, "submit_ms", r.submit_ms));
  PP_RETURN_IF_ERROR(int_column(kStartMs, "start_ms", r.start_ms));
  return int_column(kEndMs, "end_ms", r.end_ms);
}

}  // namespace

void BindJobColumns(Statement* stmt, const JobRecord& record, const std::string& record_json) {
  stmt->Bind(1, static_cast<int64_t>(record.uid))
      .Bind(2, record.user)
      .Bind(3, StoredStateName(record.state))
      .Bind(4, StoredReasonName(record.reason))
      .Bind(5, static_cast<int64_t>(record.request.priority))
      .Bind(6, record.submit_ms)
      .Bind(7, record.start_ms)
      .Bind(8, record.end_ms)
      .Bind(9, record_json);
}

Result<JobRecord> DecodeJobRow(const Statement& row) {
  std::string id = std::to_string(row.ColumnInt64(kId));
  if (!row.ColumnIsNull(kEnvId) && row.ColumnIsNull(kEnv))
    return Internal("job " + id + " in the store: its environment (envs row " +
                    std::to_string(row.ColumnInt64(kEnvId)) + ") is missing");
  Result<JobRecord> record = row.ColumnIsNull(kEnvId)
                                 ? DecodeRecord(row.ColumnText(kRecord))
                                 : DecodeRecord(row.ColumnText(kRecord), row.ColumnText(kEnv));
  if (!record.ok()) {
    return Internal("job " + id + " in the store: " + record.status().message());
  }
  PP_RETURN_IF_ERROR(CheckColumns(row, *record));
  return std::move(record).value();
}

}  // namespace pinpoint::store
