// Fuzzes the job store's record decoder (src/store/record_codec.h) with damaged or hand-edited
// `record` text: it must refuse or read, never crash, and what it reads must survive a round trip.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "store/record_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto record = pinpoint::store::DecodeRecord(text);
  if (!record.ok()) return 0;
  auto encoded = pinpoint::store::EncodeRecord(*record);
  if (!encoded.ok()) return 0;  // a string that is not UTF-8: refused when stored
  auto again = pinpoint::store::DecodeRecord(*encoded);
  if (!again.ok() || !(*again == *record)) std::abort();
  return 0;
}
