// Fuzzes the simulated-node configuration parser (a file an admin or a test writes).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "gpu/simulated_backend.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  (void)pinpoint::gpu::SimulatedBackend::FromJson(j);
  return 0;
}
