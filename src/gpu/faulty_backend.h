// FaultyGpuBackend: wraps any GpuBackend and injects failures, as leveldb's ErrorEnv wraps an Env.
// Faults are a wrapper, not a fork: the wrapped backend behaves as it always does.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "gpu/gpu_backend.h"

namespace pinpoint::gpu {

// Owns the wrapped backend; target() gives it back for scripting (e.g. a SimulatedBackend).
//
// The fault controls (Set*, Inject*, counters) are thread-safe, so a test may change faults while
// a daemon samples. Calls that reach the wrapped backend keep its own contract (GpuBackend is
// thread-compatible), and are made with no lock held.
class FaultyGpuBackend final : public GpuBackend {
 public:
  enum class Op { kInventory, kSample };

  explicit FaultyGpuBackend(std::unique_ptr<GpuBackend> target);

  GpuBackend* target() const { return target_.get(); }

  // Sample(index) returns kUnavailable "GPU <index>: device lost (injected)" until cleared.
  void SetDeviceLost(int index, bool lost);
  // Inventory() returns kUnavailable "inventory failed (injected)" until cleared.
  void SetInventoryFailure(bool fail);
  // Countdown: the next `calls_before` calls of `op` pass through, then the `times` calls after
  // them return `fault` (times < 0: every call from then on), then calls pass through again.
  // A new injection for `op` replaces the previous one. `fault` must not be ok.
  void InjectAfter(Op op, int calls_before, Status fault, int times = 1);
  // Runs before every call reaches the fault checks, with the op and the GPU index (-1 for
  // Inventory): a test can block here to play a slow driver. Null to clear.
  void SetCallHook(std::function<void(Op, int)> hook);
  // Drops every fault and the hook; counters are kept.
  void ClearFaults();

  // Calls seen of `op`, and how many of them this wrapper failed (by any fault).
  int calls(Op op) const;
  int injected_faults(Op op) const;

  // GpuBackend.
  Source source() const override { return target_->source(); }
  std::string Kind() const override { return target_->Kind(); }
  std::string DriverVersion() const override { return target_->DriverVersion(); }
  Result<std::vector<GpuInfo>> Inventory() override;
  Result<GpuSample> Sample(int index) override;
  Result<std::vector<XidEvent>> TakeXidEvents() override { return target_->TakeXidEvents(); }

 private:
  struct Countdown {
    int calls_before = 0;
    int times = 0;  // < 0: forever
    Status fault;
  };
  struct Counters {
    int calls = 0;
    int faults = 0;
  };

  // Counts the call and returns the fault to inject, if any (ok otherwise).
  Status NextFault(Op op, int index);

  const std::unique_ptr<GpuBackend> target_;
  mutable std::mutex mu_;
  std::set<int> lost_;                  // guarded by mu_
  bool inventory_fails_ = false;        // guarded by mu_
  std::map<Op, Countdown> countdowns_;  // guarded by mu_
  std::map<Op, Counters> counters_;     // guarded by mu_
  std::function<void(Op, int)> hook_;   // guarded by mu_
};

}  // namespace pinpoint::gpu
