// Fuzzes pinpointd's configuration parser.
#include <cstddef>
#include <cstdint>
#include <string>

#include "daemon/setup/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  (void)pinpoint::daemon::ParseConfig(text);
  return 0;
}
