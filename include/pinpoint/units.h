// Parsing and formatting of the sizes and percentages people type: "4G", "512MiB", "20%".
#pragma once

#include <cstdint>
#include <string>

#include "pinpoint/status.h"

namespace pinpoint {

// Parses a byte size. Accepts a non-negative integer or decimal number followed by a unit: B, K,
// KB, KiB, M, MB, MiB, G, GB, GiB, T, TB, TiB, P, PB, PiB (case-insensitive). Every unit is binary
// (K = KiB = 1024), as device memory is counted in binary units everywhere in NVIDIA's tools.
// The unit is required: a bare number is refused ("give a unit, e.g. 4000M or 4G"), never taken
// as bytes or MiB, except 0 (zero in any unit). Errors: kInvalidArgument naming the text, for
// empty input, a negative or non-numeric value, a missing or unknown unit, or a value above 2^60
// bytes.
Result<uint64_t> ParseSize(const std::string& text);

// Parses a percentage "20%" or "20" into 1..100. Errors: kInvalidArgument, naming the text.
Result<int> ParsePercent(const std::string& text);

// "512MiB", "4GiB", "1.5GiB": the largest binary unit in which the value is >= 1, with at most
// one decimal, trailing ".0" dropped.
std::string FormatSize(uint64_t bytes);

}  // namespace pinpoint
