// The wire format: one JSON object per line. Parsing of untrusted input never throws.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "pinpoint/status.h"

namespace pinpoint::api {

// Parses one request line (without its newline). Errors (kInvalidArgument, one line): not JSON,
// not an object, no string "op", larger than kMaxMessageBytes.
Result<nlohmann::json> ParseRequest(std::string_view line);

// {"ok": true, ...fields}
nlohmann::json OkReply(nlohmann::json fields = nlohmann::json::object());
// {"ok": false, "error": {"code": "...", "message": "..."}}
nlohmann::json ErrorReply(const Status& status);

}  // namespace pinpoint::api
