// The stored form of a job: how a JobRecord is written to, and read back from, the jobs table's
// `record` column. The store owns this encoding, apart from the client API's JSON
// (pinpoint/job.h ToJson): renaming or dropping a field of the API changes nothing on disk, and
// every change to what is written here is a new record format. docs/store.md, "Record formats",
// lists the formats and says how to add one.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/job_record.h"
#include "pinpoint/job.h"
#include "pinpoint/status.h"

namespace pinpoint::store {

// Format 1: one JSON object with every field of JobRecord under the names and spellings it had
// when the store was first released (the same object as the API's job then). It carries no
// format key: a record with none is format 1. Later formats name themselves in kRecordFormatKey.
inline constexpr int kOldestRecordFormat = 1;
inline constexpr int kCurrentRecordFormat = 1;
inline constexpr char kRecordFormatKey[] = "record_format";

// The record in kCurrentRecordFormat, as JSON text.
// Errors: kInvalidArgument when it cannot be encoded (a string that is not UTF-8).
Result<std::string> EncodeRecord(const JobRecord& record);
// The same with request.env written as `{}` (JobStore::Update keeps the stored one: a job's
// environment is fixed at its submit, and re-encoding a large one at every change cost the loop).
Result<std::string> EncodeRecordWithoutEnv(const JobRecord& record);

// A job's environment as the store keeps it apart from its record (schema v9: the envs table): a
// JSON object of strings, the record's request.env. Errors: kInvalidArgument as for EncodeRecord.
Result<std::string> EncodeEnv(const std::map<std::string, std::string>& env);

// Reads a record written in any format from kOldestRecordFormat to kCurrentRecordFormat. A
// missing or null field keeps JobRecord's default, as format 1 readers always did.
// Errors: kInvalidArgument naming the field (record.request.argv, record.state, ...) when the
// text is not JSON, a field has the wrong type or an unknown value, or the format is not one of
// those (a record from a newer pinpoint).
Result<JobRecord> DecodeRecord(std::string_view text);
// The same for a record whose environment is stored apart (EncodeEnv's text, read as the
// record's request.env). Errors: DecodeRecord's, the environment's named record.request.env.
Result<JobRecord> DecodeRecord(std::string_view text, std::string_view env);

// How the store spells a job state in the `state` column (and in format 1 records). Frozen: the
// column is queried by these words (docs/store.md), whatever the API calls the states.
const char* StoredStateName(JobState state);
// How the store spells a reason in the `reason` column and in records. Frozen as the states are.
const char* StoredReasonName(Reason reason);
// How records spell sharing modes, holds and job kinds; frozen too. "unknown" for a value the
// store has no word for: a record holding one is refused (EncodeRecord), never stored so.
const char* StoredModeName(SharingMode mode);
const char* StoredHoldName(Hold hold);
const char* StoredKindName(JobKind kind);

}  // namespace pinpoint::store
