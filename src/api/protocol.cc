#include "api/protocol.h"

#include "pinpoint/api_codec.h"

namespace pinpoint::api {

using nlohmann::json;

Result<json> ParseRequest(std::string_view line) {
  if (line.size() > kMaxMessageBytes) return InvalidArgument("message is larger than 1 MiB");
  json j = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument("message is not valid JSON");
  if (!j.is_object()) return InvalidArgument("message must be a JSON object");
  if (!j.contains("op") || !j["op"].is_string())
    return InvalidArgument("message has no \"op\" string");
  return j;
}

json OkReply(json fields) {
  if (!fields.is_object()) fields = json::object();
  fields["ok"] = true;
  return fields;
}

json ErrorReply(const Status& status) {
  return json{{"ok", false}, {"error", ErrorToJson(status)}};
}

}  // namespace pinpoint::api
