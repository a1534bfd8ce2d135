// The "qos" reply's JSON form (docs/api.md, "qos"): the node's service classes.
#include "common/json_reader.h"
#include "pinpoint/api_codec.h"

namespace pinpoint {

using nlohmann::json;

namespace {

json ToJson(const ServiceClass& c) {
  return json{{"name", c.name},
              {"priority", c.priority},
              {"preempts", c.preempts},
              {"preempt_mode", PreemptModeName(c.preempt_mode)},
              {"grace_s", c.grace_s},
              {"users", c.users},
              {"mps_client_priority", c.mps_client_priority}};
}

Result<ServiceClass> ServiceClassFromJson(const json& j) {
  ServiceClass c;
  auto in = JsonReader::Record(j, "service class");
  in.String("name", &c.name);
  in.Integer("priority", &c.priority);
  in.StringList("preempts", &c.preempts);
  in.Name("preempt_mode", &c.preempt_mode, PreemptModeFromName, "preempt mode");
  in.Integer("grace_s", &c.grace_s);
  in.StringList("users", &c.users);
  in.Integer("mps_client_priority", &c.mps_client_priority);
  return in.Done(std::move(c));
}

}  // namespace

json ToJson(const QosRequest&) { return json{{"op", QosRequest::kOp}}; }

template <>
Result<QosRequest> FromJson<QosRequest>(const json&) {
  return QosRequest{};
}

json ToJson(const QosReply& m) {
  json classes = json::array();
  for (const ServiceClass& c : m.classes) classes.push_back(ToJson(c));
  return json{{"classes", std::move(classes)}, {"default_qos", m.default_qos}};
}

template <>
Result<QosReply> FromJson<QosReply>(const json& j) {
  QosReply m;
  auto in = JsonReader::Record(j, "reply");
  if (in.Require("classes")) in.ObjectList("classes", &m.classes, ServiceClassFromJson);
  in.String("default_qos", &m.default_qos);
  return in.Done(std::move(m));
}

}  // namespace pinpoint
