// Fuzzes the parsers of sizes and percentages people type on the command line.
#include <cstddef>
#include <cstdint>
#include <string>

#include "pinpoint/units.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto bytes = pinpoint::ParseSize(text);
  if (bytes.ok()) {
    auto again = pinpoint::ParseSize(pinpoint::FormatSize(*bytes));
    if (!again.ok()) __builtin_trap();  // what we print must parse back
  }
  auto pct = pinpoint::ParsePercent(text);
  if (pct.ok() && (*pct < 1 || *pct > 100)) __builtin_trap();
  return 0;
}
