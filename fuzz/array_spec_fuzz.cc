// Fuzzes the parser of job array specs (`submit --array`, the submit request's "array"): any
// bytes give a spec within the bounds or one error line, and what is formatted parses back.
#include <cstddef>
#include <cstdint>
#include <string>

#include "pinpoint/array_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto spec = pinpoint::ParseArraySpec(text);
  if (!spec.ok()) {
    if (spec.status().message().find('\n') != std::string::npos) __builtin_trap();  // one line
    return 0;
  }
  const auto& v = spec->indices;
  if (v.empty() || v.size() > static_cast<size_t>(pinpoint::kMaxArrayTasks)) __builtin_trap();
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 0 || v[i] > pinpoint::kMaxArrayIndex) __builtin_trap();
    if (i > 0 && v[i] <= v[i - 1]) __builtin_trap();  // ascending and distinct
  }
  if (spec->limit < 0 || spec->limit > pinpoint::kMaxArrayTasks) __builtin_trap();
  auto again = pinpoint::ParseArraySpec(pinpoint::FormatArraySpec(*spec));
  if (!again.ok() || !(*again == *spec)) __builtin_trap();  // what we send must parse back
  return 0;
}
