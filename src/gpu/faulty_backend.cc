#include "gpu/faulty_backend.h"

#include <cassert>
#include <utility>

namespace pinpoint::gpu {

FaultyGpuBackend::FaultyGpuBackend(std::unique_ptr<GpuBackend> target)
    : target_(std::move(target)) {
  assert(target_ != nullptr);
}

void FaultyGpuBackend::SetDeviceLost(int index, bool lost) {
  std::lock_guard<std::mutex> lock(mu_);
  if (lost) {
    lost_.insert(index);
  } else {
    lost_.erase(index);
  }
}

void FaultyGpuBackend::SetInventoryFailure(bool fail) {
  std::lock_guard<std::mutex> lock(mu_);
  inventory_fails_ = fail;
}

void FaultyGpuBackend::InjectAfter(Op op, int calls_before, Status fault, int times) {
  assert(!fault.ok());
  std::lock_guard<std::mutex> lock(mu_);
  countdowns_[op] = Countdown{calls_before, times, std::move(fault)};
}

void FaultyGpuBackend::SetCallHook(std::function<void(Op, int)> hook) {
  std::lock_guard<std::mutex> lock(mu_);
  hook_ = std::move(hook);
}

void FaultyGpuBackend::ClearFaults() {
  std::lock_guard<std::mutex> lock(mu_);
  lost_.clear();
  inventory_fails_ = false;
  countdowns_.clear();
  hook_ = nullptr;
}

int FaultyGpuBackend::calls(Op op) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = counters_.find(op);
  return it == counters_.end() ? 0 : it->second.calls;
}

int FaultyGpuBackend::injected_faults(Op op) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = counters_.find(op);
  return it == counters_.end() ? 0 : it->second.faults;
}

Status FaultyGpuBackend::NextFault(Op op, int index) {
  std::function<void(Op, int)> hook;
  {
    std::lock_guard<std::mutex> lock(mu_);
    hook = hook_;
  }
  if (hook) hook(op, index);  // outside the lock: it may block or call back into the controls

  std::lock_guard<std::mutex> lock(mu_);
  Counters& counters = counters_[op];
  ++counters.calls;
  Status fault;
  if (op == Op::kSample && lost_.count(index) > 0) {
    fault = Unavailable("GPU " + std::to_string(index) + ": device lost (injected)");
  } else if (op == Op::kInventory && inventory_fails_) {
    fault = Unavailable("inventory failed (injected)");
  }
  // A countdown advances on every call, so "after N calls" counts calls, not successes.
  auto it = countdowns_.find(op);
  if (it != countdowns_.end()) {
    Countdown& c = it->second;
    if (c.calls_before > 0) {
      --c.calls_before;
    } else if (c.times != 0) {
      if (fault.ok()) fault = c.fault;
      if (c.times > 0 && --c.times == 0) countdowns_.erase(it);
    }
  }
  if (!fault.ok()) ++counters.faults;
  return fault;
}

Result<std::vector<GpuInfo>> FaultyGpuBackend::Inventory() {
  if (Status fault = NextFault(Op::kInventory, -1); !fault.ok()) return fault;
  return target_->Inventory();
}

Result<GpuSample> FaultyGpuBackend::Sample(int index) {
  if (Status fault = NextFault(Op::kSample, index); !fault.ok()) return fault;
  return target_->Sample(index);
}

}  // namespace pinpoint::gpu
