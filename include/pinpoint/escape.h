// Text from users shown to people: a job's name, argv, cwd, user names, reasons, details, event
// texts, device names. Such text may hold bytes a terminal acts on (ESC and OSC sequences, C1
// controls) or that forge a line (newline, carriage return). Everything printed for a person
// goes through EscapeForTerminal; `pinpoint logs` alone prints a job's bytes raw, on purpose.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace pinpoint {

// Returns `text` with every byte a terminal could act on made visible, so the result holds no
// C0 control, DEL, C1 control or invalid UTF-8, and one input line stays one output line:
//   \n \r \t and backslash        -> \n \r \t \\ (two characters each)
//   other C0 controls, DEL         -> \xNN (ESC is \x1b)
//   U+0080..U+009F (C1 controls),
//   U+2028/U+2029 (line breaks),
//   bidirectional overrides and
//   isolates (U+202A..U+202E,
//   U+2066..U+2069)                -> \uNNNN
//   bytes that are not UTF-8       -> \xNN, one per byte
// Printable ASCII and other valid UTF-8 pass through unchanged. Pure; any thread.
std::string EscapeForTerminal(std::string_view text);

// Where `text` first holds a byte that EscapeForTerminal would change (backslash excepted), or
// std::string_view::npos when none does: what a request validator rejects in fields that are
// one line for people (job names, user names).
size_t FirstUnprintable(std::string_view text);

}  // namespace pinpoint
