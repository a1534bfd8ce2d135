#include "daemon/setup/log_format.h"

#include <gtest/gtest.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

#include <algorithm>
#include <sstream>

namespace pinpoint::daemon {
namespace {

// A job name or MPS log line with a newline would otherwise start a forged line of root's log.
TEST(LogFormatTest, UserTextCannotForgeALogLine) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_st>(out);
  spdlog::logger logger("test", sink);
  logger.set_formatter(EscapingLogFormatter());
  logger.warn("job {}: {}", 7,
              "exec failed\n2026-11-23T10:00:00.000 info root: all clear\x1b]0;x\x07");
  logger.flush();
  std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_NE(text.find(" warning job 7: exec failed\\n2026-11-23T10:00:00.000 info root: all "
                      "clear\\x1b]0;x\\x07\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace pinpoint::daemon
