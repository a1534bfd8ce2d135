// FakeMps: the MPS mode for tests. A recording sharing::FakeBackend (what was prepared, adopted
// as prepared, released, stopped, reset; scripted failures and events) that holds and names its
// variables as MPS does, and scripts MPS's events: a fatal client fault, an unresponsive control
// daemon, a daemon crash. State is per instance.
#pragma once

#include <unistd.h>

#include "mps/mps_backend.h"
#include "sharing/fake_backend.h"

namespace pinpoint::mps {

class FakeMps : public sharing::FakeBackend {
 public:
  explicit FakeMps(sharing::PlacementRules rules = MpsRules())
      : FakeBackend(SharingMode::kMps, std::move(rules)) {}

  SharingMode HoldsAs(uint64_t slot_gpu_mem_bytes, size_t devices) const override {
    return MpsHoldsAs(slot_gpu_mem_bytes, devices);
  }
  std::vector<std::string> OwnVariables() const override { return MpsVariables(); }
  std::vector<AppliedLimit> Applies(const sharing::Slice& slice) const override {
    return MpsApplies(slice);
  }
  std::vector<std::string> ClientPaths(
      const std::map<std::string, std::string>& env) const override {
    return MpsClientPaths(env);
  }
  Result<std::map<std::string, std::string>> Prepare(const sharing::Slice& slice) override {
    auto recorded = FakeBackend::Prepare(slice);
    if (!recorded.ok()) return recorded.status();
    // The client environment the real daemons give, under fake directories.
    std::string dir = "/fake/mps/" + slice.device_uuid;
    return ClientEnvironment(dir + "/pipe", dir + "/log", slice);
  }
  // An adopted client counts as prepared, as a daemon would start for it.
  void Adopt(const sharing::Slice& slice) override { (void)Prepare(slice); }

  // A fatal-fault claim from the MPS daemon of user `uid` (by default the test's own user).
  void InjectFault(int device_index, uint32_t uid = ::getuid()) {
    Inject(MpsEvent(device_index, sharing::Event::Kind::kFault, "scripted fatal GPU error", uid));
  }
  // The control daemon of `uid` on the device stopped answering and was killed.
  void InjectUnresponsive(int device_index, uint32_t uid = ::getuid()) {
    Inject(MpsEvent(device_index, sharing::Event::Kind::kServerUnresponsive,
                    "scripted: did not answer", uid));
  }
  void InjectDaemonDeath(int device_index) {
    Inject(MpsEvent(device_index, sharing::Event::Kind::kServerDied, "scripted crash"));
  }
};

}  // namespace pinpoint::mps
