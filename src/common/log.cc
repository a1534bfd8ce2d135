#include "common/log.h"

#include <spdlog/spdlog.h>

#include <string>

namespace pinpoint::log {
namespace {

spdlog::level::level_enum SpdlogLevel(Level level) {
  switch (level) {
    case Level::kDebug:
      return spdlog::level::debug;
    case Level::kInfo:
      return spdlog::level::info;
    case Level::kWarn:
      return spdlog::level::warn;
    case Level::kError:
      return spdlog::level::err;
    case Level::kCritical:
      return spdlog::level::critical;
  }
  return spdlog::level::critical;
}

}  // namespace

bool Enabled(Level level) { return spdlog::should_log(SpdlogLevel(level)); }

bool SetLevel(std::string_view name) {
  std::string text(name);
  auto level = spdlog::level::from_str(text);
  if (level == spdlog::level::off && text != "off") return false;  // from_str's "unknown"
  spdlog::set_level(level);
  return true;
}

void Write(Level level, std::string_view message) {
  spdlog::log(SpdlogLevel(level), "{}", message);
}

}  // namespace pinpoint::log
