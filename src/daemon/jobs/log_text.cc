#include "daemon/jobs/log_text.h"

namespace pinpoint::daemon {

size_t LastLinesStart(std::string_view text, int lines) {
  if (lines <= 0 || text.empty()) return 0;
  // A final '\n' ends the last line rather than starting an empty one.
  size_t end = text.back() == '\n' ? text.size() - 1 : text.size();
  int seen = 0;
  for (size_t i = end; i > 0; --i) {
    if (text[i - 1] == '\n' && ++seen == lines) return i;
  }
  return 0;
}

size_t CompleteUtf8Length(std::string_view text) {
  // Look back over at most 3 continuation bytes for the lead byte of the last sequence.
  size_t n = text.size();
  for (size_t back = 1; back <= 4 && back <= n; ++back) {
    auto byte = static_cast<unsigned char>(text[n - back]);
    if ((byte & 0xC0) == 0x80) continue;  // a continuation byte
    size_t need = (byte & 0xE0) == 0xC0   ? 2
                  : (byte & 0xF0) == 0xE0 ? 3
                  : (byte & 0xF8) == 0xF0 ? 4
                                          : 1;
    return back < need ? n - back : n;
  }
  return n;
}

}  // namespace pinpoint::daemon
