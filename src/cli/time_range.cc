#include "cli/time_range.h"

#include <time.h>

#include <cctype>
#include <cstdio>
#include <optional>
#include <string>

namespace pinpoint::cli {
namespace {

bool AllDigits(const std::string& s, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return to > from;
}

// "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM" as local time; nullopt when it is neither or no such time.
std::optional<int64_t> LocalTime(const std::string& s) {
  bool with_time = s.size() == 16;
  if (s.size() != 10 && !with_time) return std::nullopt;
  if (!AllDigits(s, 0, 4) || s[4] != '-' || !AllDigits(s, 5, 7) || s[7] != '-' ||
      !AllDigits(s, 8, 10))
    return std::nullopt;
  if (with_time && (s[10] != 'T' || !AllDigits(s, 11, 13) || s[13] != ':' || !AllDigits(s, 14, 16)))
    return std::nullopt;
  tm t{};
  t.tm_year = std::stoi(s.substr(0, 4)) - 1900;
  t.tm_mon = std::stoi(s.substr(5, 2)) - 1;
  t.tm_mday = std::stoi(s.substr(8, 2));
  if (with_time) {
    t.tm_hour = std::stoi(s.substr(11, 2));
    t.tm_min = std::stoi(s.substr(14, 2));
  }
  t.tm_isdst = -1;
  tm asked = t;
  time_t when = ::mktime(&t);
  // mktime moves 2024-02-30 to March: such a day does not exist.
  if (when == static_cast<time_t>(-1) || t.tm_mday != asked.tm_mday || t.tm_mon != asked.tm_mon ||
      asked.tm_hour > 23 || asked.tm_min > 59)
    return std::nullopt;
  return static_cast<int64_t>(when) * 1000;
}

}  // namespace

Result<int64_t> ParseWhen(const std::string& text, int64_t now_ms, const std::string& flag) {
  if (text.size() >= 2 && text.size() <= 7 && AllDigits(text, 0, text.size() - 1) &&
      (text.back() == 'd' || text.back() == 'h')) {
    int64_t n = std::stoll(text.substr(0, text.size() - 1));
    if (n >= 1 && n <= 100000) return now_ms - n * (text.back() == 'd' ? 86'400'000 : 3'600'000);
  }
  if (auto when = LocalTime(text)) return *when;
  return InvalidArgument(
      flag + " '" + text +
      "' is not a time: use YYYY-MM-DD or YYYY-MM-DDTHH:MM (local time), or 7d / 24h (ago)");
}

}  // namespace pinpoint::cli
