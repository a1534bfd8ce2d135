// The DeviceBook shared by pinpoint-k8s's poll thread (which refreshes it from the SliceSource)
// and its gRPC handlers (which read it, and wait in ListAndWatch for it to change).
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "k8s/device/device_book.h"
#include "k8s/device/slice_source.h"

namespace pinpoint::k8s {

class DeviceState {
 public:
  explicit DeviceState(uint64_t mem_unit_bytes) : book_(mem_unit_bytes) {}

  // Reads the source's inventory (without holding the lock) and takes it into the book; bumps
  // the generation of each resource whose list changed and wakes its waiters. Returns the
  // inventory's status (the book is updated either way: an error marks devices Unhealthy).
  Status Refresh(SliceSource& source);

  struct Snapshot {
    uint64_t generation = 0;
    std::vector<PluginDevice> devices;
  };
  Snapshot Current(Resource resource) const;

  // Blocks until the resource's generation is not `seen` (returns true), or `stop` returns true
  // (returns false). `stop` is checked on every wake and at least once a second, so it may
  // watch something nobody notifies about (a cancelled RPC).
  bool WaitForChange(Resource resource, uint64_t seen, const std::function<bool()>& stop);

  // Wakes every waiter so that it checks its `stop`.
  void WakeAll();

  // Calls f(book) under the lock.
  template <typename F>
  auto WithBook(F&& f) const {
    std::lock_guard lock(mu_);
    return f(book_);
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable changed_;
  DeviceBook book_;
  uint64_t generation_[2] = {0, 0};
};

}  // namespace pinpoint::k8s
