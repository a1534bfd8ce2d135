// The lease ops' requests and replies (api_codec.h, docs/api.md "open_lease").
#include "codec/fields.h"
#include "common/json_reader.h"
#include "pinpoint/api_codec.h"

namespace pinpoint {

using codec::Op;
using nlohmann::json;

namespace {

// A request's lease id or pid: a JSON integer > 0.
void ReadPositive(JsonReader& in, const json& j, const char* key, const char* what, int64_t* out) {
  if (!in.ok()) return;
  if (!j.contains(key)) return in.Fail(InvalidArgument(std::string("missing \"") + key + "\""));
  const json& v = j[key];
  if (!v.is_number_integer() || v.get<int64_t>() <= 0)
    return in.Fail(key, std::string("must be ") + what);
  *out = v.get<int64_t>();
}

Result<LeaseRequest> LeaseRequestFromJson(const json& j) {
  LeaseRequest r;
  auto in = JsonReader::Record(j, "request");
  in.String("name", &r.name);
  in.Integer("gpus", &r.gpus);
  in.Integer("gpu_mem_bytes", &r.gpu_mem_bytes);
  in.Integer("gpu_share_pct", &r.gpu_share_pct);
  in.Integer("priority", &r.priority);
  in.Integer("time_limit_s", &r.time_limit_s);
  in.String("as_user", &r.as_user);
  in.IntegerList("devices", &r.devices);
  return in.Done(std::move(r));
}

json ToJson(const LeaseRequest& r) {
  json j{{"name", r.name},
         {"gpus", r.gpus},
         {"gpu_mem_bytes", r.gpu_mem_bytes},
         {"gpu_share_pct", r.gpu_share_pct},
         {"priority", r.priority},
         {"as_user", r.as_user},
         {"devices", r.devices}};
  // Only when asked: a daemon from before lease time limits reads the rest as it did.
  if (r.time_limit_s != 0) j["time_limit_s"] = r.time_limit_s;
  return j;
}

Result<LeaseMount> MountFromJson(const json& j) {
  LeaseMount m;
  auto in = JsonReader::Record(j, "mount");
  in.String("host_path", &m.host_path);
  in.String("container_path", &m.container_path);
  in.Bool("read_only", &m.read_only);
  return in.Done(std::move(m));
}

json ToJson(const LeaseEdits& e) {
  json mounts = json::array();
  for (const auto& m : e.mounts)
    mounts.push_back(json{{"host_path", m.host_path},
                          {"container_path", m.container_path},
                          {"read_only", m.read_only}});
  return json{{"env", e.env}, {"device_nodes", e.device_nodes}, {"mounts", std::move(mounts)}};
}

Result<LeaseEdits> EditsFromJson(const json& j) {
  LeaseEdits e;
  auto in = JsonReader::Record(j, "edits");
  in.StringMap("env", &e.env);
  in.StringList("device_nodes", &e.device_nodes);
  in.ObjectList("mounts", &e.mounts, MountFromJson);
  return in.Done(std::move(e));
}

// A reply that is one lease record.
template <typename Reply>
Result<Reply> LeaseReplyFromJson(const json& j) {
  Reply m;
  auto in = JsonReader::Record(j, "reply");
  in.Require("lease");
  in.Object("lease", &m.lease, FromJson<JobView>);
  return in.Done(std::move(m));
}

}  // namespace

// ---- open_lease ----

json ToJson(const OpenLeaseRequest& m) {
  json j = Op(OpenLeaseRequest::kOp);
  j["request"] = ToJson(m.request);
  return j;
}

template <>
Result<OpenLeaseRequest> FromJson<OpenLeaseRequest>(const json& j) {
  OpenLeaseRequest m;
  auto in = JsonReader::Message(j, "");
  if (in.ok() && !j.contains("request"))
    return InvalidArgument("open_lease needs a \"request\" object");
  in.Object("request", &m.request, LeaseRequestFromJson);
  return in.Done(std::move(m));
}

json ToJson(const OpenLeaseReply& m) {
  return json{{"lease", ToJson(m.lease)}, {"edits", ToJson(m.edits)}};
}

template <>
Result<OpenLeaseReply> FromJson<OpenLeaseReply>(const json& j) {
  OpenLeaseReply m;
  auto in = JsonReader::Record(j, "reply");
  in.Require("lease");
  in.Object("lease", &m.lease, FromJson<JobView>);
  in.Require("edits");
  in.Object("edits", &m.edits, EditsFromJson);
  return in.Done(std::move(m));
}

// ---- attach_lease ----

json ToJson(const AttachLeaseRequest& m) {
  json j = Op(AttachLeaseRequest::kOp);
  j["id"] = m.id;
  j["pid"] = m.pid;
  if (m.container_uid) j["container_uid"] = *m.container_uid;
  return j;
}

template <>
Result<AttachLeaseRequest> FromJson<AttachLeaseRequest>(const json& j) {
  AttachLeaseRequest m;
  auto in = JsonReader::Message(j, "");
  ReadPositive(in, j, "id", "a positive lease id", &m.id);
  ReadPositive(in, j, "pid", "a positive process id", &m.pid);
  if (in.ok() && j.contains("container_uid") && !j["container_uid"].is_null()) {
    int64_t uid = -1;
    in.Integer("container_uid", &uid, 0, 0xFFFFFFFE);
    if (in.ok()) m.container_uid = static_cast<uint32_t>(uid);
  }
  return in.Done(std::move(m));
}

json ToJson(const AttachLeaseReply& m) { return json{{"lease", ToJson(m.lease)}}; }

template <>
Result<AttachLeaseReply> FromJson<AttachLeaseReply>(const json& j) {
  return LeaseReplyFromJson<AttachLeaseReply>(j);
}

// ---- close_lease ----

json ToJson(const CloseLeaseRequest& m) {
  json j = Op(CloseLeaseRequest::kOp);
  j["id"] = m.id;
  return j;
}

template <>
Result<CloseLeaseRequest> FromJson<CloseLeaseRequest>(const json& j) {
  CloseLeaseRequest m;
  auto in = JsonReader::Message(j, "");
  ReadPositive(in, j, "id", "a positive lease id", &m.id);
  return in.Done(std::move(m));
}

json ToJson(const CloseLeaseReply& m) { return json{{"lease", ToJson(m.lease)}}; }

template <>
Result<CloseLeaseReply> FromJson<CloseLeaseReply>(const json& j) {
  return LeaseReplyFromJson<CloseLeaseReply>(j);
}

}  // namespace pinpoint
