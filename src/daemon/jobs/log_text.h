// Pure helpers for pieces of a job's output as `logs` returns them (docs/api.md, "logs").
#pragma once

#include <cstddef>
#include <string_view>

namespace pinpoint::daemon {

// Where the last `lines` lines of `text` begin (an index into `text`). A line ends with '\n'; a
// last line without one counts as a line. 0 when `text` holds `lines` lines or fewer, or
// `lines` <= 0 (then all of it is kept).
size_t LastLinesStart(std::string_view text, int lines);

// The length of `text` without a UTF-8 sequence cut off at its end (at most 3 bytes dropped):
// a follower gets the rest of a character with the next piece instead of two replacement
// characters. Bytes that are no valid start of a sequence are kept (they are invalid anyway).
size_t CompleteUtf8Length(std::string_view text);

}  // namespace pinpoint::daemon
