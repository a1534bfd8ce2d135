#include "daemon/setup/log_format.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

#include <string_view>

#include "pinpoint/escape.h"

namespace pinpoint::daemon {

namespace {

class EscapedMessage : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string text = EscapeForTerminal(std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<EscapedMessage>();
  }
};

}  // namespace

std::unique_ptr<spdlog::formatter> EscapingLogFormatter() {
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<EscapedMessage>('*').set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %*");
  return formatter;
}

void UseEscapingLogFormat() { spdlog::set_formatter(EscapingLogFormatter()); }

}  // namespace pinpoint::daemon
