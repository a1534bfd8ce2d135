// cancel, hold, release, update_array and update (api_codec.h, docs/api.md): a list of ids in, one
// result per id out.
#include <limits>

#include "codec/fields.h"
#include "common/json_reader.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/array_spec.h"
#include "pinpoint/time_limit.h"

namespace pinpoint {

using codec::IdsFromJson;
using codec::Op;
using nlohmann::json;

// ---- cancel, hold, release: a list of ids in, one result per id out ----

namespace {

Result<CancelResult> CancelResultFromJson(const json& j) {
  CancelResult r;
  auto in = JsonReader::Record(j, "result");
  bool ok = false;
  in.Integer("id", &r.id);
  in.Require("ok");
  in.Bool("ok", &ok);
  if (in.ok() && !ok && in.Require("error")) r.status = ErrorFromJson(in.At("error"));
  in.Integer("array_tasks", &r.array_tasks);
  return in.Done(std::move(r));
}

json IdsRequest(const char* op, const std::vector<JobId>& ids) {
  json j = Op(op);
  j["ids"] = ids;
  return j;
}

json ResultsJson(const std::vector<CancelResult>& results) {
  json out = json::array();
  for (const auto& r : results) {
    json one{{"id", r.id}, {"ok", r.status.ok()}};
    if (!r.status.ok()) one["error"] = ErrorToJson(r.status);
    if (r.array_tasks > 0) one["array_tasks"] = r.array_tasks;  // only for an array's id
    out.push_back(std::move(one));
  }
  return json{{"results", std::move(out)}};
}

template <typename Reply>
Result<Reply> ResultsFromJson(const json& j) {
  Reply m;
  auto in = JsonReader::Record(j, "reply");
  if (in.Require("results")) in.ObjectList("results", &m.results, CancelResultFromJson);
  return in.Done(std::move(m));
}

template <typename Request>
Result<Request> IdsRequestFromJson(const json& j) {
  auto ids = IdsFromJson(j, kCancelMaxIds);
  if (!ids.ok()) return ids.status();
  Request m;
  m.ids = std::move(ids).value();
  return m;
}

// cancel, hold and release: "ids", and "arrays" only when set (requests without it read as they
// always have).
template <typename Request>
json IdsAndArrays(const char* op, const Request& m) {
  json j = IdsRequest(op, m.ids);
  if (!m.arrays.empty()) j["arrays"] = m.arrays;
  return j;
}

template <typename Request>
Result<Request> IdsAndArraysFromJson(const json& j) {
  if (!j.is_object() || !j.contains("arrays")) return IdsRequestFromJson<Request>(j);
  // With "arrays", "ids" may be empty or absent: the two lists are bounded together.
  Request m;
  for (auto [key, out] : {std::pair{"ids", &m.ids}, std::pair{"arrays", &m.arrays}}) {
    if (!j.contains(key)) continue;
    const json& list = j[key];
    if (!list.is_array())
      return InvalidArgument(std::string("\"") + key + "\" must be an array of job ids");
    for (const auto& v : list) {
      if (!v.is_number_integer() || v.get<int64_t>() <= 0)
        return InvalidArgument(std::string("\"") + key + "\" must hold positive job ids");
      if (m.ids.size() + m.arrays.size() >= kCancelMaxIds)
        return InvalidArgument("at most " + std::to_string(kCancelMaxIds) + " ids at once");
      out->push_back(v.get<int64_t>());
    }
  }
  if (m.ids.empty() && m.arrays.empty())
    return InvalidArgument("\"ids\" and \"arrays\" name no job");
  return m;
}

}  // namespace

json ToJson(const CancelRequest& m) { return IdsAndArrays(CancelRequest::kOp, m); }
json ToJson(const CancelReply& m) { return ResultsJson(m.results); }
json ToJson(const HoldRequest& m) { return IdsAndArrays(HoldRequest::kOp, m); }
json ToJson(const HoldReply& m) { return ResultsJson(m.results); }
json ToJson(const ReleaseRequest& m) { return IdsAndArrays(ReleaseRequest::kOp, m); }
json ToJson(const ReleaseReply& m) { return ResultsJson(m.results); }
json ToJson(const SuspendRequest& m) { return IdsAndArrays(SuspendRequest::kOp, m); }
json ToJson(const SuspendReply& m) { return ResultsJson(m.results); }
json ToJson(const ResumeRequest& m) { return IdsAndArrays(ResumeRequest::kOp, m); }
json ToJson(const ResumeReply& m) { return ResultsJson(m.results); }
json ToJson(const UpdateArrayRequest& m) {
  return json{{"op", UpdateArrayRequest::kOp}, {"arrays", m.arrays}, {"limit", m.limit}};
}
json ToJson(const UpdateArrayReply& m) { return ResultsJson(m.results); }

template <>
Result<CancelRequest> FromJson<CancelRequest>(const json& j) {
  return IdsAndArraysFromJson<CancelRequest>(j);
}

template <>
Result<CancelReply> FromJson<CancelReply>(const json& j) {
  return ResultsFromJson<CancelReply>(j);
}
template <>
Result<HoldRequest> FromJson<HoldRequest>(const json& j) {
  return IdsAndArraysFromJson<HoldRequest>(j);
}
template <>
Result<HoldReply> FromJson<HoldReply>(const json& j) {
  return ResultsFromJson<HoldReply>(j);
}
template <>
Result<ReleaseRequest> FromJson<ReleaseRequest>(const json& j) {
  return IdsAndArraysFromJson<ReleaseRequest>(j);
}
template <>
Result<ReleaseReply> FromJson<ReleaseReply>(const json& j) {
  return ResultsFromJson<ReleaseReply>(j);
}
template <>
Result<SuspendRequest> FromJson<SuspendRequest>(const json& j) {
  return IdsAndArraysFromJson<SuspendRequest>(j);
}
template <>
Result<SuspendReply> FromJson<SuspendReply>(const json& j) {
  return ResultsFromJson<SuspendReply>(j);
}
template <>
Result<ResumeRequest> FromJson<ResumeRequest>(const json& j) {
  return IdsAndArraysFromJson<ResumeRequest>(j);
}
template <>
Result<ResumeReply> FromJson<ResumeReply>(const json& j) {
  return ResultsFromJson<ResumeReply>(j);
}
template <>
Result<UpdateArrayRequest> FromJson<UpdateArrayRequest>(const json& j) {
  if (!j.is_object() || !j.contains("arrays"))
    return InvalidArgument("\"arrays\" must name job arrays by their ids");
  auto arrays = IdsAndArraysFromJson<CancelRequest>(json{{"arrays", j["arrays"]}});
  if (!arrays.ok()) return arrays.status();
  UpdateArrayRequest m;
  m.arrays = std::move(arrays->arrays);
  if (!j.contains("limit") || !j["limit"].is_number_integer() || j["limit"].get<int64_t>() < 0 ||
      j["limit"].get<int64_t>() > kMaxArrayTasks)
    return InvalidArgument("\"limit\" must be a number of tasks from 0 (no limit) to " +
                           std::to_string(kMaxArrayTasks));
  m.limit = j["limit"].get<int>();
  return m;
}
template <>
Result<UpdateArrayReply> FromJson<UpdateArrayReply>(const json& j) {
  return ResultsFromJson<UpdateArrayReply>(j);
}

// ---- update: ids and arrays as hold's, and the fields to change (only those given) ----

json ToJson(const UpdateRequest& m) {
  json j = IdsAndArrays(UpdateRequest::kOp, m);
  const JobEdit& e = m.edit;
  if (e.time_limit_s) j["time_limit_s"] = *e.time_limit_s;
  if (e.gpu_mem_bytes) j["gpu_mem_bytes"] = *e.gpu_mem_bytes;
  if (e.gpu_share_pct) j["gpu_share_pct"] = *e.gpu_share_pct;
  if (e.priority) j["priority"] = *e.priority;
  if (e.name) j["name"] = *e.name;
  if (e.array_limit) j["array_limit"] = *e.array_limit;
  if (e.gpus) j["gpus"] = *e.gpus;
  if (e.cpus) j["cpus"] = *e.cpus;
  if (e.mem_bytes) j["mem_bytes"] = *e.mem_bytes;
  if (e.mig_profile) j["mig_profile"] = *e.mig_profile;
  if (e.qos) j["qos"] = *e.qos;
  return j;
}
json ToJson(const UpdateReply& m) { return ResultsJson(m.results); }

namespace {

// An optional integer field in [lo, hi].
template <typename Int>
void OptionalInRange(JsonReader& in, const char* key, std::optional<Int>* out, int64_t lo,
                     int64_t hi) {
  if (!in.Has(key)) return;
  Int value{};
  in.Integer(key, &value, lo, hi);
  if (in.ok()) *out = value;
}

}  // namespace

template <>
Result<UpdateRequest> FromJson<UpdateRequest>(const json& j) {
  auto ids = IdsAndArraysFromJson<UpdateRequest>(j);
  if (!ids.ok()) return ids.status();
  UpdateRequest m = std::move(ids).value();
  JobEdit& e = m.edit;
  auto in = JsonReader::Message(j, "");
  OptionalInRange(in, "time_limit_s", &e.time_limit_s, 0, kMaxTimeLimitS);
  // A slice's memory: at least a byte (a whole GPU is asked for at submit, never by update).
  OptionalInRange(in, "gpu_mem_bytes", &e.gpu_mem_bytes, 1, std::numeric_limits<int64_t>::max());
  OptionalInRange(in, "gpu_share_pct", &e.gpu_share_pct, 0, 100);
  OptionalInRange(in, "priority", &e.priority, -1000000, 1000000);
  in.OptionalString("name", &e.name);
  OptionalInRange(in, "array_limit", &e.array_limit, 0, kMaxArrayTasks);
  OptionalInRange(in, "gpus", &e.gpus, 0, 1024);
  OptionalInRange(in, "cpus", &e.cpus, 1, 65536);
  OptionalInRange(in, "mem_bytes", &e.mem_bytes, 0, std::numeric_limits<int64_t>::max());
  in.OptionalString("mig_profile", &e.mig_profile);
  in.OptionalString("qos", &e.qos);
  if (in.ok() && e.qos && e.qos->empty()) return InvalidArgument("qos: names no class");
  if (in.ok() && e.empty())
    return InvalidArgument(
        "update names nothing to change: give time_limit_s, gpu_mem_bytes, gpu_share_pct, "
        "priority, name, array_limit, gpus, cpus, mem_bytes, mig_profile or qos");
  return in.Done(std::move(m));
}
template <>
Result<UpdateReply> FromJson<UpdateReply>(const json& j) {
  return ResultsFromJson<UpdateReply>(j);
}

}  // namespace pinpoint
