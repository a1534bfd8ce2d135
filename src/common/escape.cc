#include "pinpoint/escape.h"

#include <cstdint>
#include <cstdio>

namespace pinpoint {

namespace {

// The length of the valid UTF-8 sequence at text[i] and its code point, or 0 when the bytes
// there are not one (overlong forms, surrogates and code points past U+10FFFF included).
size_t DecodeUtf8(std::string_view text, size_t i, uint32_t* code_point) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char b0 = byte(i);
  size_t len = 0;
  uint32_t cp = 0, min = 0;
  if (b0 < 0x80) {
    *code_point = b0;
    return 1;
  } else if ((b0 & 0xe0) == 0xc0) {
    len = 2, cp = b0 & 0x1f, min = 0x80;
  } else if ((b0 & 0xf0) == 0xe0) {
    len = 3, cp = b0 & 0x0f, min = 0x800;
  } else if ((b0 & 0xf8) == 0xf0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  *code_point = cp;
  return len;
}

// Code points above ASCII that a terminal acts on or that change how a line reads.
bool IsUnsafeNonAscii(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
         (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

bool IsControlAscii(uint32_t cp) { return cp < 0x20 || cp == 0x7f; }

std::string Hex(const char* format, unsigned value) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

}  // namespace

std::string EscapeForTerminal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    size_t len = DecodeUtf8(text, i, &cp);
    if (len == 0) {
      out += Hex("\\x%02x", static_cast<unsigned char>(text[i]));
      i += 1;
      continue;
    }
    if (cp == '\n')
      out += "\\n";
    else if (cp == '\r')
      out += "\\r";
    else if (cp == '\t')
      out += "\\t";
    else if (cp == '\\')
      out += "\\\\";
    else if (IsControlAscii(cp))
      out += Hex("\\x%02x", cp);
    else if (IsUnsafeNonAscii(cp))
      out += Hex("\\u%04x", cp);
    else
      out.append(text.substr(i, len));
    i += len;
  }
  return out;
}

size_t FirstUnprintable(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    size_t len = DecodeUtf8(text, i, &cp);
    if (len == 0 || IsControlAscii(cp) || IsUnsafeNonAscii(cp)) return i;
    i += len;
  }
  return std::string_view::npos;
}

}  // namespace pinpoint
