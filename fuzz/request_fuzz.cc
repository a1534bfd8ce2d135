// Fuzzes the daemon's handling of one untrusted request line: framing, JSON, and every op's
// request decoder (api_codec.h), plus the job forms a request or a record carries.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api/protocol.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/job.h"

namespace {

// Decodes `j` as M; what decodes encodes and decodes again to the same JSON.
template <typename M>
void RoundTrip(const nlohmann::json& j) {
  auto m = pinpoint::FromJson<M>(j);
  if (!m.ok()) return;
  nlohmann::json once = pinpoint::ToJson(*m);
  auto again = pinpoint::FromJson<M>(once);
  if (!again.ok() || pinpoint::ToJson(*again) != once) __builtin_trap();
}

}  // namespace

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
  if (j.contains("job")) RoundTrip<pinpoint::JobView>(j["job"]);
  RoundTrip<pinpoint::SubmitRequest>(j);
  RoundTrip<pinpoint::WaitRequest>(j);
  RoundTrip<pinpoint::QueueRequest>(j);
  RoundTrip<pinpoint::ShowRequest>(j);
  RoundTrip<pinpoint::CancelRequest>(j);
  RoundTrip<pinpoint::LogsRequest>(j);
  return 0;
}
