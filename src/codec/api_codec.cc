// The ops' requests and replies (api_codec.h). The job view is in job_view_codec.cc, the gpus
// reply in gpus_codec.cc, cancel, hold, release, update and update_array in control_codec.cc.
#include "pinpoint/api_codec.h"

#include <algorithm>
#include <array>

#include "codec/fields.h"
#include "common/enum_names.h"
#include "common/json_reader.h"
#include "pinpoint/array_spec.h"
#include "pinpoint/escape.h"

namespace pinpoint {

using codec::IdsFromJson;
using codec::Op;
using nlohmann::json;

namespace {

// A request's job id: a JSON integer > 0 (docs/api.md, "Operations").
void ReadJobId(JsonReader& in, const json& j, const char* key, JobId* out) {
  if (!in.ok()) return;
  if (!j.contains(key)) return in.Fail(InvalidArgument(std::string("missing \"") + key + "\""));
  const json& v = j[key];
  if (!v.is_number_integer() || v.get<int64_t>() <= 0)
    return in.Fail(key, "must be a positive job id");
  *out = v.get<int64_t>();
}

// A listing's page field: an integer in [0, hi]; absent or null is 0.
void ReadPageField(JsonReader& in, const json& j, const char* key, int hi, int* out) {
  if (!in.ok() || !j.contains(key) || j[key].is_null()) return;
  const json& v = j[key];
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > hi)
    return in.Fail(key, "must be a count between 0 and " + std::to_string(hi));
  *out = static_cast<int>(v.get<int64_t>());
}

Result<JobEventView> EventFromJson(const json& j) {
  JobEventView e;
  auto in = JsonReader::Record(j, "event");
  in.Integer("time_ms", &e.time_ms);
  in.String("kind", &e.kind);
  in.String("detail", &e.detail);
  return in.Done(std::move(e));
}

}  // namespace

const char* LogStreamName(LogStream stream) {
  return stream == LogStream::kStderr ? "stderr" : "stdout";
}

std::optional<LogStream> LogStreamFromName(const std::string& name) {
  if (name == "stdout") return LogStream::kStdout;
  if (name == "stderr") return LogStream::kStderr;
  return std::nullopt;
}

Result<json> ParseReplyLine(std::string_view line) {
  json reply = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (!reply.is_object()) return Unavailable("pinpointd sent a reply that is not a JSON object");
  if (reply.contains("ok") && reply["ok"].is_boolean() && reply["ok"].get<bool>()) return reply;
  return ErrorFromJson(reply.contains("error") ? reply["error"] : json());
}

Status ErrorFromJson(const json& error) {
  std::string code = "internal", message = "unknown error";
  if (error.is_object()) {
    if (error.contains("code") && error["code"].is_string())
      code = error["code"].get<std::string>();
    if (error.contains("message") && error["message"].is_string())
      message = error["message"].get<std::string>();
  }
  Code parsed = CodeFromName(code);
  // "ok" is no error: a reply that says it failed with code "ok" failed all the same.
  return Status(parsed == Code::kOk ? Code::kInternal : parsed, message);
}

json ErrorToJson(const Status& status) {
  return json{{"code", CodeName(status.code())}, {"message", status.message()}};
}

// ---- version ----

json ToJson(const VersionRequest&) { return Op(VersionRequest::kOp); }

template <>
Result<VersionRequest> FromJson<VersionRequest>(const json&) {
  return VersionRequest{};
}

json ToJson(const VersionReply& m) {
  return json{{"version", m.version},
              {"backend", m.backend},
              {"driver", m.driver},
              {"schema", m.schema},
              {"metrics_port", m.metrics_port ? json(*m.metrics_port) : json(nullptr)}};
}

template <>
Result<VersionReply> FromJson<VersionReply>(const json& j) {
  VersionReply m;
  auto in = JsonReader::Record(j, "reply");
  in.String("version", &m.version);
  in.String("backend", &m.backend);
  in.String("driver", &m.driver);
  in.Integer("schema", &m.schema);
  in.OptionalInteger("metrics_port", &m.metrics_port);
  return in.Done(std::move(m));
}

// ---- submit ----

namespace {

constexpr std::array<std::pair<ScriptField, const char*>, 13> kScriptFields = {{
    {ScriptField::kAsUser, "as_user"},
    {ScriptField::kPriority, "priority"},
    {ScriptField::kHold, "hold"},
    {ScriptField::kAfter, "after"},
    {ScriptField::kAfterOk, "afterok"},
    {ScriptField::kArray, "array"},
    {ScriptField::kName, "name"},
    {ScriptField::kOutput, "output_path"},
    {ScriptField::kError, "error_path"},
    {ScriptField::kEnv, "env"},
    {ScriptField::kCwd, "cwd"},
    {ScriptField::kTimeLimit, "time_limit_s"},
    {ScriptField::kQos, "qos"},
}};

// "from_script": an object of field words, each to a place ("job.sh:3") of one line for people.
void ReadScriptOrigins(JsonReader& in, const json& j, ScriptOrigins* out) {
  if (!in.ok() || !j.contains("from_script")) return;
  std::map<std::string, std::string> words;
  in.StringMap("from_script", &words);
  for (const auto& [word, place] : words) {
    if (!in.ok()) return;
    std::optional<ScriptField> field = ScriptFieldFromName(word);
    if (!field) return in.Fail("from_script", "names a field that no job script gives");
    if (place.empty() || place.size() > kMaxScriptPlaceBytes ||
        FirstUnprintable(place) != std::string_view::npos)
      return in.Fail("from_script", "places must be 1 to " + std::to_string(kMaxScriptPlaceBytes) +
                                        " bytes of one printable line");
    (*out)[*field] = place;
  }
}

}  // namespace

const char* ScriptFieldName(ScriptField field) { return NameIn(kScriptFields, field); }

std::optional<ScriptField> ScriptFieldFromName(const std::string& name) {
  return ValueIn(kScriptFields, name);
}

json ToJson(const SubmitRequest& m) {
  json j = Op(SubmitRequest::kOp);
  j["request"] = ToJson(m.request);
  j["wait"] = m.wait;
  if (m.idempotency_key) j["idempotency_key"] = *m.idempotency_key;
  if (m.hold) j["hold"] = true;  // only when set: requests without it read as they always have
  if (m.array) j["array"] = FormatArraySpec(*m.array);
  if (!m.from_script.empty()) {
    json from = json::object();
    for (const auto& [field, place] : m.from_script) from[ScriptFieldName(field)] = place;
    j["from_script"] = std::move(from);
  }
  return j;
}

template <>
Result<SubmitRequest> FromJson<SubmitRequest>(const json& j) {
  SubmitRequest m;
  auto in = JsonReader::Message(j, "");
  if (in.ok() && !j.contains("request"))
    return InvalidArgument("submit needs a \"request\" object");
  in.Bool("wait", &m.wait);
  in.Bool("hold", &m.hold);
  if (in.ok() && j.contains("idempotency_key")) {
    std::string key;
    in.String("idempotency_key", &key);
    m.idempotency_key = std::move(key);
  }
  in.Object("request", &m.request, RequestFromJson);
  ReadScriptOrigins(in, j, &m.from_script);
  if (in.ok() && j.contains("array")) {
    if (!j["array"].is_string()) {
      in.Fail("array", "must be task indices as text, e.g. \"1-100%5\"");
    } else if (auto spec = ParseArraySpec(j["array"].get<std::string>()); !spec.ok()) {
      in.Fail(spec.status());
    } else {
      m.array = std::move(spec).value();
    }
  }
  return in.Done(std::move(m));
}

json ToJson(const SubmitReply& m) {
  json j{{"job", ToJson(m.job)}};
  if (m.array) {
    j["array"] = {{"id", m.array->id},
                  {"count", m.array->count},
                  {"first_job_id", m.array->first_job_id},
                  {"last_job_id", m.array->last_job_id}};
  }
  return j;
}

namespace {

Result<SubmittedArrayView> SubmittedArrayFromJson(const json& j) {
  SubmittedArrayView a;
  auto in = JsonReader::Record(j, "array");
  in.Integer("id", &a.id);
  in.Integer("count", &a.count);
  in.Integer("first_job_id", &a.first_job_id);
  in.Integer("last_job_id", &a.last_job_id);
  return in.Done(a);
}

}  // namespace

template <>
Result<SubmitReply> FromJson<SubmitReply>(const json& j) {
  SubmitReply m;
  auto in = JsonReader::Record(j, "reply");
  if (in.Require("job")) in.Object("job", &m.job, FromJson<JobView>);
  in.OptionalObject("array", &m.array, SubmittedArrayFromJson);
  return in.Done(std::move(m));
}

// ---- wait ----

json ToJson(const WaitRequest& m) {
  json j = Op(WaitRequest::kOp);
  if (m.ids.empty())
    j["id"] = m.id;
  else
    j["ids"] = m.ids;
  return j;
}

template <>
Result<WaitRequest> FromJson<WaitRequest>(const json& j) {
  WaitRequest m;
  if (j.is_object() && j.contains("ids")) {
    if (j.contains("id")) return InvalidArgument("give \"id\" or \"ids\", not both");
    auto ids = IdsFromJson(j, kWaitMaxIds);
    if (!ids.ok()) return ids.status();
    m.ids = std::move(ids).value();
    return m;
  }
  auto in = JsonReader::Message(j, "");
  ReadJobId(in, j, "id", &m.id);
  return in.Done(m);
}

json ToJson(const WaitReply& m) {
  if (m.jobs.empty()) return json{{"job", ToJson(m.job)}};
  json jobs = json::array();
  for (const auto& job : m.jobs) jobs.push_back(ToJson(job));
  return json{{"jobs", std::move(jobs)}};
}

template <>
Result<WaitReply> FromJson<WaitReply>(const json& j) {
  WaitReply m;
  auto in = JsonReader::Record(j, "reply");
  // The reply to "ids" has "jobs", the reply to "id" has "job".
  if (j.is_object() && j.contains("jobs"))
    in.ObjectList("jobs", &m.jobs, FromJson<JobView>);
  else if (in.Require("job"))
    in.Object("job", &m.job, FromJson<JobView>);
  return in.Done(std::move(m));
}

// ---- queue ----

json ToJson(const QueueRequest& m) {
  json j = Op(QueueRequest::kOp);
  j["all"] = m.all;
  j["limit"] = m.limit;
  j["offset"] = m.offset;
  if (m.user) j["user"] = *m.user;
  if (m.ended_after_ms) j["ended_after_ms"] = *m.ended_after_ms;
  if (m.ended_before_ms) j["ended_before_ms"] = *m.ended_before_ms;
  if (!m.names.empty()) j["names"] = m.names;
  if (!m.states.empty()) {
    json states = json::array();
    for (JobState state : m.states) states.push_back(JobStateName(state));
    j["states"] = std::move(states);
  }
  if (!m.ids.empty()) j["ids"] = m.ids;
  if (m.start) j["start"] = true;
  if (m.enforcement) j["enforcement"] = true;
  return j;
}

template <>
Result<QueueRequest> FromJson<QueueRequest>(const json& j) {
  QueueRequest m;
  auto in = JsonReader::Message(j, "");
  if (in.ok() && j.contains("user")) {
    if (j["user"].is_string())
      m.user = j["user"].get<std::string>();
    else
      in.Fail("user", "must be a user name");
  }
  ReadPageField(in, j, "offset", kQueueMaxOffset, &m.offset);
  ReadPageField(in, j, "limit", kQueueMaxLimit, &m.limit);
  in.OptionalInteger("ended_after_ms", &m.ended_after_ms);
  in.OptionalInteger("ended_before_ms", &m.ended_before_ms);
  in.StringList("names", &m.names);
  if (in.ok() && m.names.size() > kQueueMaxNames)
    in.Fail("names", "may hold at most " + std::to_string(kQueueMaxNames) + " names");
  std::vector<std::string> states;
  in.StringList("states", &states);
  for (const std::string& name : states) {
    auto state = JobStateFromName(name);
    if (!state) {
      in.Fail("states",
              "'" + name + "' is not a job state (pending, running, completed, failed, cancelled)");
      break;
    }
    // Each state once: a request naming "pending" a million times selects as one naming it once.
    if (std::find(m.states.begin(), m.states.end(), *state) == m.states.end())
      m.states.push_back(*state);
  }
  in.IntegerList("ids", &m.ids);
  if (in.ok() && m.ids.size() > kQueueMaxIds)
    in.Fail("ids", "may hold at most " + std::to_string(kQueueMaxIds) + " ids");
  if (in.ok() && std::any_of(m.ids.begin(), m.ids.end(), [](JobId id) { return id <= 0; }))
    in.Fail("ids", "must hold positive job ids");
  if (in.Has("start")) in.Bool("start", &m.start);
  if (in.Has("enforcement")) in.Bool("enforcement", &m.enforcement);
  // Documented leniency: a value that is not a boolean counts as false.
  m.all = in.ok() && j.contains("all") && j["all"].is_boolean() && j["all"].get<bool>();
  return in.Done(std::move(m));
}

json ToJson(const QueueReply& m) {
  json jobs = json::array();
  for (const auto& job : m.jobs) jobs.push_back(ToJson(job));
  json j{{"jobs", std::move(jobs)},   {"backend", m.backend}, {"total", m.total},
         {"offset", m.offset},        {"limit", m.limit},     {"more", m.more},
         {"more_tasks", m.more_tasks}};
  if (!m.starts.empty()) {
    json starts = json::array();
    for (const StartView& s : m.starts) {
      json one{{"id", s.id}};
      if (s.start_ms) one["start_ms"] = *s.start_ms;
      if (!s.why.empty()) one["why"] = s.why;
      starts.push_back(std::move(one));
    }
    j["starts"] = std::move(starts);
  }
  return j;
}

namespace {

Result<StartView> StartFromJson(const json& j) {
  StartView s;
  auto in = JsonReader::Record(j, "start");
  in.Integer("id", &s.id);
  in.OptionalInteger("start_ms", &s.start_ms);
  in.String("why", &s.why);
  return in.Done(std::move(s));
}

}  // namespace

template <>
Result<QueueReply> FromJson<QueueReply>(const json& j) {
  QueueReply m;
  auto in = JsonReader::Record(j, "reply");
  if (in.Require("jobs")) in.ObjectList("jobs", &m.jobs, FromJson<JobView>);
  in.String("backend", &m.backend);
  in.Integer("total", &m.total);
  in.Integer("offset", &m.offset);
  in.Integer("limit", &m.limit);
  in.Integer("more", &m.more);
  m.more_tasks = m.more;  // from a pinpointd that does not say: the rows
  if (in.Has("more_tasks")) in.Integer("more_tasks", &m.more_tasks);
  if (in.Has("starts")) in.ObjectList("starts", &m.starts, StartFromJson);
  return in.Done(std::move(m));
}

// ---- show ----

json ToJson(const ShowRequest& m) {
  json j = Op(ShowRequest::kOp);
  j["id"] = m.id;
  return j;
}

template <>
Result<ShowRequest> FromJson<ShowRequest>(const json& j) {
  ShowRequest m;
  auto in = JsonReader::Message(j, "");
  ReadJobId(in, j, "id", &m.id);
  return in.Done(m);
}

json ToJson(const ShowReply& m) {
  json events = json::array();
  for (const auto& e : m.events)
    events.push_back({{"time_ms", e.time_ms}, {"kind", e.kind}, {"detail", e.detail}});
  return json{{"job", ToJson(m.job)}, {"events", std::move(events)}};
}

template <>
Result<ShowReply> FromJson<ShowReply>(const json& j) {
  ShowReply m;
  auto in = JsonReader::Record(j, "reply");
  if (in.Require("job")) in.Object("job", &m.job, FromJson<JobView>);
  in.ObjectList("events", &m.events, EventFromJson);
  return in.Done(std::move(m));
}

// ---- gpus: the reply is in gpus_codec.cc ----

json ToJson(const GpusRequest&) { return Op(GpusRequest::kOp); }

template <>
Result<GpusRequest> FromJson<GpusRequest>(const json&) {
  return GpusRequest{};
}

// ---- logs ----

json ToJson(const LogsRequest& m) {
  json j = Op(LogsRequest::kOp);
  j["id"] = m.id;
  j["stream"] = LogStreamName(m.stream);
  j["max_bytes"] = m.max_bytes;
  if (m.tail_lines > 0) j["tail_lines"] = m.tail_lines;
  if (m.from_offset) j["from_offset"] = *m.from_offset;
  if (m.follow) j["follow"] = true;
  return j;
}

template <>
Result<LogsRequest> FromJson<LogsRequest>(const json& j) {
  LogsRequest m;
  auto in = JsonReader::Message(j, "");
  ReadJobId(in, j, "id", &m.id);
  std::string stream = "stdout";
  if (in.ok() && j.contains("stream")) {
    if (j["stream"].is_string())
      stream = j["stream"].get<std::string>();
    else
      in.Fail("stream", "must be stdout or stderr");
  }
  if (in.ok() && j.contains("max_bytes")) {
    const json& v = j["max_bytes"];
    if (!v.is_number_unsigned() || v.get<uint64_t>() > kLogsMaxBytes)
      in.Fail("max_bytes", "must be at most " + std::to_string(kLogsMaxBytes));
    else
      m.max_bytes = v.get<uint64_t>();
  }
  if (in.Has("tail_lines")) in.Integer("tail_lines", &m.tail_lines, 0, kLogsMaxTailLines);
  if (in.ok() && j.contains("from_offset")) {
    if (!j["from_offset"].is_number_unsigned())
      in.Fail("from_offset", "must be a byte offset (0 or more)");
    else
      m.from_offset = j["from_offset"].get<uint64_t>();
  }
  if (in.Has("follow")) in.Bool("follow", &m.follow);
  if (in.ok() && m.follow && !m.from_offset)
    in.Fail(InvalidArgument("\"follow\" needs \"from_offset\" (a reply's end_offset)"));
  if (in.ok() && m.from_offset && m.tail_lines > 0)
    in.Fail(InvalidArgument("\"tail_lines\" reads the tail; it does not go with \"from_offset\""));
  auto parsed = LogStreamFromName(stream);
  if (in.ok() && !parsed) in.Fail(InvalidArgument("stream must be stdout or stderr"));
  if (parsed) m.stream = *parsed;
  return in.Done(m);
}

json ToJson(const LogsReply& m) {
  return json{{"id", m.id},
              {"stream", LogStreamName(m.stream)},
              {"data", m.data},
              {"end_offset", m.end_offset},
              {"ended", m.ended}};
}

template <>
Result<LogsReply> FromJson<LogsReply>(const json& j) {
  LogsReply m;
  auto in = JsonReader::Record(j, "reply");
  std::string stream = "stdout";
  in.Integer("id", &m.id);
  in.String("stream", &stream);
  if (in.Require("data")) in.String("data", &m.data);
  in.Integer("end_offset", &m.end_offset);
  in.Bool("ended", &m.ended);
  auto parsed = LogStreamFromName(stream);
  if (!parsed)
    in.Fail("stream", "must be stdout or stderr");
  else
    m.stream = *parsed;
  return in.Done(std::move(m));
}

}  // namespace pinpoint
