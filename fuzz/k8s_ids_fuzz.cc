// Fuzzes what pinpoint-k8s takes from the kubelet: device IDs in GetPreferredAllocation and
// Allocate (src/k8s/allocation.h). Input: byte 0 picks the resource, byte 1 the allocation
// size; the rest is newline-separated IDs, those before the first empty line "must include".
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "k8s/device/allocation.h"
#include "k8s/device/fake_slice_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pinpoint::k8s;
  if (size < 2) return 0;
  static const DeviceBook book = [] {
    DeviceBook b(uint64_t{1} << 30);
    SliceInventory inv = FakeSliceSource::H100x2();
    inv.devices[1].mode = pinpoint::SharingMode::kExclusive;
    b.Update(inv);
    return b;
  }();
  Resource resource = data[0] & 1 ? Resource::kGpu : Resource::kGpuMem;
  int want = static_cast<int8_t>(data[1]);
  std::string text(reinterpret_cast<const char*>(data + 2), size - 2);
  std::vector<std::string> must, available;
  bool in_must = true;
  size_t at = 0;
  while (at <= text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string id = text.substr(at, end - at);
    if (id.empty()) {
      in_must = false;
    } else {
      (in_must ? must : available).push_back(id);
    }
    at = end + 1;
  }
  auto preferred = PreferredAllocation(resource, book, available, must, want);
  if (preferred.ok()) {
    // A preference is always something Allocate takes, unless its units span GPUs (gpu-mem
    // preferences never do).
    auto plan = PlanLease(resource, book, *preferred);
    if (!plan.ok()) __builtin_trap();
    if (static_cast<int>(preferred->size()) != want) __builtin_trap();
  }
  (void)PlanLease(resource, book, available);
  return 0;
}
