// The real SliceSource: pinpointd over its Unix socket, through the public client API.
#pragma once

#include <string>

#include "k8s/slice_source.h"
#include "pinpoint/api.h"

namespace pinpoint::k8s {

// pinpointd's `gpus` reply as the plugin sees it: one SliceDevice per device, unhealthy while
// drained (reason: its drain_reason, or "drained") or recovering from an MPS fault.
SliceInventory InventoryFromGpus(const GpusReply& reply);

// Connects anew for each call, so a restarted pinpointd is found again. Thread-safe (no shared
// connection).
class PinpointSliceSource : public SliceSource {
 public:
  explicit PinpointSliceSource(std::string socket_path) : socket_path_(std::move(socket_path)) {}

  // The `gpus` op. Errors: the client's (kUnavailable when pinpointd is not running).
  Result<SliceInventory> Inventory() override;

  // Not wired yet: pinpointd has no lease ops. kUnavailable, "leases not available in this
  // pinpointd", so the kubelet fails the pod with that line rather than start it unconfined.
  Result<Lease> OpenLease(const LeaseRequest& request) override;
  Status CloseLease(const std::string& lease_id) override;

 private:
  std::string socket_path_;
};

}  // namespace pinpoint::k8s
