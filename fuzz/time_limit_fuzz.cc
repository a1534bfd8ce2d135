// Fuzzes the parser of time limits people type (submit --time, the configuration's
// default_time_limit and max_time_limit).
#include <cstddef>
#include <cstdint>
#include <string>

#include "pinpoint/time_limit.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto seconds = pinpoint::ParseTimeLimit(text);
  if (!seconds.ok()) return 0;
  if (*seconds < 0 || *seconds > pinpoint::kMaxTimeLimitS) __builtin_trap();
  auto again = pinpoint::ParseTimeLimit(pinpoint::FormatTimeLimit(*seconds));
  if (!again.ok() || *again != *seconds) __builtin_trap();  // what we print must parse back
  return 0;
}
