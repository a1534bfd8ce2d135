// pinpointd's log lines. Messages quote user text (job names, details, MPS log lines a job's user
// can write); escaped, none of it can forge a log line or drive the terminal that reads the log.
#pragma once

#include <memory>

namespace spdlog {
class formatter;  // <spdlog/formatter.h>: only the test and log_format.cc include spdlog
}  // namespace spdlog

namespace pinpoint::daemon {

// "2026-11-23T10:00:00.123 info message": the message part escaped with EscapeForTerminal, so
// every log call is one line. For tests; the daemon's main calls UseEscapingLogFormat.
std::unique_ptr<spdlog::formatter> EscapingLogFormatter();
// The default logger writes its lines with EscapingLogFormatter from now on.
void UseEscapingLogFormat();

}  // namespace pinpoint::daemon
