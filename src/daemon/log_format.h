// pinpointd's log lines. Messages quote user text (job names, details, MPS log lines a job's user
// can write); escaped, none of it can forge a log line or drive the terminal that reads the log.
#pragma once

#include <memory>

#include <spdlog/formatter.h>

namespace pinpoint::daemon {

// "2026-11-23T10:00:00.123 info message": the message part escaped with EscapeForTerminal, so
// every log call is one line. For spdlog::set_formatter (the daemon's main) and tests.
std::unique_ptr<spdlog::formatter> EscapingLogFormatter();

}  // namespace pinpoint::daemon
