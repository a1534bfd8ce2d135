#include "pinpoint/time_limit.h"

#include <cstdio>
#include <optional>
#include <vector>

#include "common/decimal.h"
#include "pinpoint/escape.h"

namespace pinpoint {

namespace {

// Decimal digits, read as at most kMaxTimeLimitS + 1: every product below stays far from 2^63,
// and a number that large is refused as above the most.
std::optional<int64_t> Digits(const std::string& text) {
  return ParseDecimal(text, kMaxTimeLimitS);
}

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == sep)
      parts.emplace_back();
    else
      parts.back() += c;
  }
  return parts;
}

// "30s", "10m", "2h", "1d": the seconds, or nullopt when `text` is not of that form.
std::optional<int64_t> WithUnit(const std::string& text) {
  if (text.size() < 2) return std::nullopt;
  int64_t unit = 0;
  switch (text.back()) {
    case 's':
    case 'S':
      unit = 1;
      break;
    case 'm':
    case 'M':
      unit = 60;
      break;
    case 'h':
    case 'H':
      unit = 3600;
      break;
    case 'd':
    case 'D':
      unit = 86400;
      break;
    default:
      return std::nullopt;
  }
  auto n = Digits(text.substr(0, text.size() - 1));
  if (!n) return std::nullopt;
  return *n * unit;
}

// Slurm's forms, or nullopt.
std::optional<int64_t> SlurmForm(const std::string& text) {
  int64_t days = 0;
  std::string clock = text;
  bool with_days = false;
  if (auto dash = text.find('-'); dash != std::string::npos) {
    auto d = Digits(text.substr(0, dash));
    if (!d) return std::nullopt;
    days = *d;
    clock = text.substr(dash + 1);
    with_days = true;
  }
  std::vector<std::string> fields = Split(clock, ':');
  if (fields.size() > 3) return std::nullopt;
  std::vector<int64_t> n;
  for (const auto& f : fields) {
    auto v = Digits(f);
    if (!v) return std::nullopt;
    n.push_back(*v);
  }
  // What each field counts: D-H[:M[:S]], or without days M, M:S, H:M:S.
  int64_t h = 0, m = 0, s = 0;
  if (with_days) {
    h = n[0];
    if (n.size() > 1) m = n[1];
    if (n.size() > 2) s = n[2];
    if (h >= 24) return std::nullopt;
  } else if (n.size() == 1) {
    m = n[0];
  } else if (n.size() == 2) {
    m = n[0];
    s = n[1];
  } else {
    h = n[0];
    m = n[1];
    s = n[2];
  }
  bool first_is_minutes = !with_days && n.size() <= 2;
  if ((m >= 60 && !first_is_minutes) || (s >= 60 && n.size() > 1)) return std::nullopt;
  if (days > kMaxTimeLimitS / 86400) return std::nullopt;
  return ((days * 24 + h) * 60 + m) * 60 + s;
}

}  // namespace

Result<int64_t> ParseTimeLimit(const std::string& text) {
  std::optional<int64_t> seconds = WithUnit(text);
  if (!seconds) seconds = SlurmForm(text);
  if (!seconds)
    return InvalidArgument("invalid time limit '" + EscapeForTerminal(text) +
                           "' (minutes, M:S, H:M:S, D-H, D-H:M, D-H:M:S, or 30s, 10m, 2h, 1d)");
  if (*seconds > kMaxTimeLimitS)
    return InvalidArgument("time limit '" + EscapeForTerminal(text) + "' is above the most, " +
                           FormatTimeLimit(kMaxTimeLimitS));
  return *seconds;
}

std::string FormatTimeLimit(int64_t seconds) {
  if (seconds < 0) seconds = 0;
  long long d = seconds / 86400, h = seconds / 3600 % 24, m = seconds / 60 % 60, s = seconds % 60;
  char buf[48];
  if (d > 0)
    std::snprintf(buf, sizeof(buf), "%lld-%02lld:%02lld:%02lld", d, h, m, s);
  else if (h > 0)
    std::snprintf(buf, sizeof(buf), "%lld:%02lld:%02lld", h, m, s);
  else
    std::snprintf(buf, sizeof(buf), "%lld:%02lld", m, s);
  return buf;
}

}  // namespace pinpoint
