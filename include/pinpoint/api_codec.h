// The JSON forms of the socket API's messages (api.h), as docs/api.md describes them: the one
// codec that pinpoint::Client, pinpointd's Service and the CLI's --json output share.
//
// Encoding: a request's JSON holds its "op"; a reply's holds the op's fields, without "ok" (the
// server adds it). Keys are written in alphabetical order (nlohmann's default).
//
// Decoding never throws. It fails with kInvalidArgument and one line naming the field:
//   - Requests, read by the daemon: the rules and messages of docs/api.md for each op
//     ("\"id\" must be a positive job id", "\"wait\" must be true or false"); fields an op does
//     not know are ignored.
//   - Replies, read by clients: a field of the wrong type is an error ("job.state is not a known
//     job state", "devices must be an array"). A missing field keeps its default, as an older
//     daemon sends fewer, except the fields a reply is about: job, jobs, results, devices, data.
//     "ok" and unknown fields are ignored.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "pinpoint/api.h"
#include "pinpoint/status.h"

namespace pinpoint {

nlohmann::json ToJson(const VersionRequest& m);
nlohmann::json ToJson(const VersionReply& m);
nlohmann::json ToJson(const SubmitRequest& m);
nlohmann::json ToJson(const SubmitReply& m);
nlohmann::json ToJson(const WaitRequest& m);
nlohmann::json ToJson(const WaitReply& m);
nlohmann::json ToJson(const QueueRequest& m);
nlohmann::json ToJson(const QueueReply& m);
nlohmann::json ToJson(const ShowRequest& m);
nlohmann::json ToJson(const ShowReply& m);
nlohmann::json ToJson(const CancelRequest& m);
nlohmann::json ToJson(const CancelReply& m);
nlohmann::json ToJson(const HoldRequest& m);
nlohmann::json ToJson(const HoldReply& m);
nlohmann::json ToJson(const ReleaseRequest& m);
nlohmann::json ToJson(const ReleaseReply& m);
nlohmann::json ToJson(const SuspendRequest& m);
nlohmann::json ToJson(const SuspendReply& m);
nlohmann::json ToJson(const ResumeRequest& m);
nlohmann::json ToJson(const ResumeReply& m);
nlohmann::json ToJson(const UpdateArrayRequest& m);
nlohmann::json ToJson(const UpdateArrayReply& m);
nlohmann::json ToJson(const UpdateRequest& m);
nlohmann::json ToJson(const UpdateReply& m);
nlohmann::json ToJson(const GpusRequest& m);
nlohmann::json ToJson(const GpusReply& m);
nlohmann::json ToJson(const QosRequest& m);
nlohmann::json ToJson(const QosReply& m);
nlohmann::json ToJson(const LogsRequest& m);
nlohmann::json ToJson(const LogsReply& m);
nlohmann::json ToJson(const OpenLeaseRequest& m);
nlohmann::json ToJson(const OpenLeaseReply& m);
nlohmann::json ToJson(const AttachLeaseRequest& m);
nlohmann::json ToJson(const AttachLeaseReply& m);
nlohmann::json ToJson(const CloseLeaseRequest& m);
nlohmann::json ToJson(const CloseLeaseReply& m);
nlohmann::json ToJson(const JobView& job);

// FromJson<SubmitRequest>(j), FromJson<ShowReply>(j), ...: one for each message above.
template <typename Message>
Result<Message> FromJson(const nlohmann::json& j);

template <>
Result<VersionRequest> FromJson<VersionRequest>(const nlohmann::json& j);
template <>
Result<VersionReply> FromJson<VersionReply>(const nlohmann::json& j);
template <>
Result<SubmitRequest> FromJson<SubmitRequest>(const nlohmann::json& j);
template <>
Result<SubmitReply> FromJson<SubmitReply>(const nlohmann::json& j);
template <>
Result<WaitRequest> FromJson<WaitRequest>(const nlohmann::json& j);
template <>
Result<WaitReply> FromJson<WaitReply>(const nlohmann::json& j);
template <>
Result<QueueRequest> FromJson<QueueRequest>(const nlohmann::json& j);
template <>
Result<QueueReply> FromJson<QueueReply>(const nlohmann::json& j);
template <>
Result<ShowRequest> FromJson<ShowRequest>(const nlohmann::json& j);
template <>
Result<ShowReply> FromJson<ShowReply>(const nlohmann::json& j);
template <>
Result<CancelRequest> FromJson<CancelRequest>(const nlohmann::json& j);
template <>
Result<CancelReply> FromJson<CancelReply>(const nlohmann::json& j);
template <>
Result<HoldRequest> FromJson<HoldRequest>(const nlohmann::json& j);
template <>
Result<HoldReply> FromJson<HoldReply>(const nlohmann::json& j);
template <>
Result<ReleaseRequest> FromJson<ReleaseRequest>(const nlohmann::json& j);
template <>
Result<ReleaseReply> FromJson<ReleaseReply>(const nlohmann::json& j);
template <>
Result<SuspendRequest> FromJson<SuspendRequest>(const nlohmann::json& j);
template <>
Result<SuspendReply> FromJson<SuspendReply>(const nlohmann::json& j);
template <>
Result<ResumeRequest> FromJson<ResumeRequest>(const nlohmann::json& j);
template <>
Result<ResumeReply> FromJson<ResumeReply>(const nlohmann::json& j);
template <>
Result<UpdateArrayRequest> FromJson<UpdateArrayRequest>(const nlohmann::json& j);
template <>
Result<UpdateArrayReply> FromJson<UpdateArrayReply>(const nlohmann::json& j);
template <>
Result<UpdateRequest> FromJson<UpdateRequest>(const nlohmann::json& j);
template <>
Result<UpdateReply> FromJson<UpdateReply>(const nlohmann::json& j);
template <>
Result<GpusRequest> FromJson<GpusRequest>(const nlohmann::json& j);
template <>
Result<GpusReply> FromJson<GpusReply>(const nlohmann::json& j);
template <>
Result<QosRequest> FromJson<QosRequest>(const nlohmann::json& j);
template <>
Result<QosReply> FromJson<QosReply>(const nlohmann::json& j);
template <>
Result<LogsRequest> FromJson<LogsRequest>(const nlohmann::json& j);
template <>
Result<LogsReply> FromJson<LogsReply>(const nlohmann::json& j);
template <>
Result<OpenLeaseRequest> FromJson<OpenLeaseRequest>(const nlohmann::json& j);
template <>
Result<OpenLeaseReply> FromJson<OpenLeaseReply>(const nlohmann::json& j);
template <>
Result<AttachLeaseRequest> FromJson<AttachLeaseRequest>(const nlohmann::json& j);
template <>
Result<AttachLeaseReply> FromJson<AttachLeaseReply>(const nlohmann::json& j);
template <>
Result<CloseLeaseRequest> FromJson<CloseLeaseRequest>(const nlohmann::json& j);
template <>
Result<CloseLeaseReply> FromJson<CloseLeaseReply>(const nlohmann::json& j);
template <>
Result<JobView> FromJson<JobView>(const nlohmann::json& j);
template <>
Result<MpsDaemonView> FromJson<MpsDaemonView>(const nlohmann::json& j);

// One reply line as a client reads it: the reply object when its "ok" is true; else the daemon's
// error (ErrorFromJson); kUnavailable for a line that is not a JSON object.
Result<nlohmann::json> ParseReplyLine(std::string_view line);

// An "ok" reply to a Request, decoded. Errors: kInternal naming the op and the field
// ("malformed reply from pinpointd to show: job.state is not a known job state").
template <typename Request>
Result<typename Request::Reply> DecodeReply(const nlohmann::json& reply) {
  auto decoded = FromJson<typename Request::Reply>(reply);
  if (!decoded.ok())
    return Internal(std::string("malformed reply from pinpointd to ") + Request::kOp + ": " +
                    decoded.status().message());
  return decoded;
}

// The error of an "ok": false reply: {"code", "message"} as a Status, never an ok one. A code
// this client does not know is kInternal (docs/api.md, "Error codes"); a malformed error object
// is kInternal with "unknown error".
Status ErrorFromJson(const nlohmann::json& error);
// {"code": ..., "message": ...} of a Status that is not ok.
nlohmann::json ErrorToJson(const Status& status);

const char* LogStreamName(LogStream stream);  // "stdout", "stderr"
std::optional<LogStream> LogStreamFromName(const std::string& name);
// A ScriptField's word on the wire: "as_user", "priority", "hold", "after", "afterok", "array",
// "name", "output_path", "error_path", "env", "cwd", "time_limit_s" (JobRequest's and
// SubmitRequest's own field names).
const char* ScriptFieldName(ScriptField field);
std::optional<ScriptField> ScriptFieldFromName(const std::string& name);

}  // namespace pinpoint
