// The programs' log: one line per call, formatted with fmt, written by spdlog's default logger.
// Only log.cc includes spdlog: spdlog is header-only here, and each file that includes it took
// about 10 s more to compile (docs/build-time.md). The programs' mains choose the level and the
// line format with spdlog itself.
#pragma once

#include <fmt/format.h>

#include <string_view>
#include <utility>

namespace pinpoint::log {

enum class Level { kDebug, kInfo, kWarn, kError, kCritical };

// Whether a line of `level` would be written now (the default logger's level).
bool Enabled(Level level);
// Sets the default logger's level by its name: trace, debug, info, warn, error, critical or off.
// Returns false, changing nothing, for any other name. For the programs' mains.
bool SetLevel(std::string_view name);
// Writes `message` as one line of `level` through the default logger.
void Write(Level level, std::string_view message);

template <typename... Args>
void Log(Level level, fmt::format_string<Args...> format, Args&&... args) {
  if (Enabled(level)) Write(level, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void Debug(fmt::format_string<Args...> format, Args&&... args) {
  Log(Level::kDebug, format, std::forward<Args>(args)...);
}
template <typename... Args>
void Info(fmt::format_string<Args...> format, Args&&... args) {
  Log(Level::kInfo, format, std::forward<Args>(args)...);
}
template <typename... Args>
void Warn(fmt::format_string<Args...> format, Args&&... args) {
  Log(Level::kWarn, format, std::forward<Args>(args)...);
}
template <typename... Args>
void Error(fmt::format_string<Args...> format, Args&&... args) {
  Log(Level::kError, format, std::forward<Args>(args)...);
}
template <typename... Args>
void Critical(fmt::format_string<Args...> format, Args&&... args) {
  Log(Level::kCritical, format, std::forward<Args>(args)...);
}

}  // namespace pinpoint::log
