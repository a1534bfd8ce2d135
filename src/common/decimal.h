// Decimal digits as a number, for the parsers of text people type (array specs, time limits, task
// indices): one rule for what a whole number is, and no overflow whatever its length.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>

namespace pinpoint {

// `text` made only of '0'..'9' (no sign, no space, not empty) as a number, or nullopt. A number
// above `max` reads as max + 1, so a caller can tell "too large" from "not a number"; any number
// of digits is safe. `max` must be below INT64_MAX / 10.
inline std::optional<int64_t> ParseDecimal(std::string_view text, int64_t max) {
  if (text.empty()) return std::nullopt;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = std::min(value * 10 + (c - '0'), max + 1);
  }
  return value;
}

}  // namespace pinpoint
