// Times for people: a clock time in milliseconds since the epoch as "2026-11-28 19:21:32 UTC".
#pragma once

#include <time.h>

#include <cstdint>
#include <string>

namespace pinpoint {

// `ms` as "YYYY-MM-DD HH:MM:SS UTC" ("?" when it cannot be shown).
inline std::string UtcTimeText(int64_t ms) {
  char at[32] = "?";
  std::tm tm{};
  time_t secs = static_cast<time_t>(ms / 1000);
  if (::gmtime_r(&secs, &tm) != nullptr)
    std::strftime(at, sizeof(at), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return at;
}

}  // namespace pinpoint
