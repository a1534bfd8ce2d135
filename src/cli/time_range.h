// `--since` / `--until` of `pinpoint report` (docs/cli.md, "report").
#pragma once

#include <cstdint>
#include <string>

#include "pinpoint/status.h"

namespace pinpoint::cli {

// A point in time as Unix epoch ms: "YYYY-MM-DD" (local midnight), "YYYY-MM-DDTHH:MM" (local
// time), or "Nd" / "Nh" (N days or hours before now_ms, N from 1 to 100000).
// Errors: kInvalidArgument naming `flag` and the text.
Result<int64_t> ParseWhen(const std::string& text, int64_t now_ms, const std::string& flag);

}  // namespace pinpoint::cli
