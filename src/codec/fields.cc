#include "codec/fields.h"

#include <nlohmann/json.hpp>
#include <string>

namespace pinpoint::codec {

using nlohmann::json;

json Op(const char* name) { return json{{"op", name}}; }

Result<std::vector<JobId>> IdsFromJson(const json& j, size_t max_ids) {
  std::vector<JobId> ids;
  if (!j.is_object() || !j.contains("ids") || !j["ids"].is_array() || j["ids"].empty())
    return InvalidArgument("\"ids\" must be a non-empty array of job ids");
  if (j["ids"].size() > max_ids)
    return InvalidArgument("at most " + std::to_string(max_ids) + " ids at once");
  for (const auto& v : j["ids"]) {
    if (!v.is_number_integer() || v.get<int64_t>() <= 0)
      return InvalidArgument("\"ids\" must hold positive job ids");
    ids.push_back(v.get<int64_t>());
  }
  return ids;
}

}  // namespace pinpoint::codec
