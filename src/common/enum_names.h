// Spelling enums for codecs: a table of {value, name} pairs, looked up both ways. Each codec
// keeps its own table (the API's in job.cc, the store's in store/record_codec.cc), so the core
// compares enums and only codecs know the words.
#pragma once

#include <iterator>
#include <optional>
#include <string_view>
#include <type_traits>

namespace pinpoint {

// The name of `value` in `names` (an array of std::pair<Enum, const char*>); "unknown" when the
// table has none.
template <typename Table, typename Enum>
const char* NameIn(const Table& names, Enum value) {
  for (const auto& [v, name] : names) {
    if (v == value) return name;
  }
  return "unknown";
}

// The value named `name` in `names`, if any. Names are matched exactly (case included).
template <typename Table>
auto ValueIn(const Table& names, std::string_view name)
    -> std::optional<std::remove_cvref_t<decltype(std::begin(names)->first)>> {
  for (const auto& [value, n] : names) {
    if (name == n) return value;
  }
  return std::nullopt;
}

}  // namespace pinpoint
