// The exclusive mode: one job at a time holds the whole device, whatever it asked for. Nothing
// to prepare: the device is the job's alone (CUDA_VISIBLE_DEVICES, set by the node, is enough).
#pragma once

#include "sharing/backend.h"

namespace pinpoint::sharing {

inline PlacementRules ExclusiveRules() { return PlacementRules{.whole_device = true}; }

class ExclusiveBackend : public Backend {
 public:
  SharingMode mode() const override { return SharingMode::kExclusive; }
  PlacementRules Rules() const override { return ExclusiveRules(); }
  SharingMode HoldsAs(uint64_t, size_t) const override { return SharingMode::kExclusive; }
  Result<std::map<std::string, std::string>> Prepare(const Slice&) override {
    return std::map<std::string, std::string>{};
  }
  // The whole device, whatever a slice asked: its own memory and every SM (a MIG instance's).
  std::vector<AppliedLimit> Applies(const Slice& slice) const override {
    return {DeviceMemory(slice), DeviceSms(slice)};
  }
  void Adopt(const Slice&) override {}
  void Release(const Slice&) override {}
};

}  // namespace pinpoint::sharing
