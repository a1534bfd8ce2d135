// Fields the codec's files share (src/codec only; the public codec is pinpoint/api_codec.h).
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "pinpoint/job.h"
#include "pinpoint/status.h"

namespace pinpoint::codec {

// A request's first field: {"op": name}.
nlohmann::json Op(const char* name);

// "ids": 1 to max_ids positive job ids. Errors: kInvalidArgument naming the rule broken.
Result<std::vector<JobId>> IdsFromJson(const nlohmann::json& j, size_t max_ids);

}  // namespace pinpoint::codec
