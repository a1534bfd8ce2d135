// Fuzzes the daemon's handling of one untrusted request line: framing, JSON, the request fields.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api/protocol.h"
#include "pinpoint/job.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view line(reinterpret_cast<const char*>(data), size);
  auto request = pinpoint::api::ParseRequest(line);
  if (!request.ok()) return 0;
  const auto& j = *request;
  if (j.contains("request")) {
    auto r = pinpoint::RequestFromJson(j["request"]);
    if (r.ok()) {
      (void)pinpoint::ValidateRequest(*r);
      (void)pinpoint::ToJson(*r).dump();
    }
  }
  if (j.contains("job")) (void)pinpoint::RecordFromJson(j["job"]);
  (void)pinpoint::api::JobIdField(j, "id");
  return 0;
}
