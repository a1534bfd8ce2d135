// The real SliceSource: pinpointd over its Unix socket, through the public client API.
#pragma once

#include <string>

#include "k8s/device/slice_source.h"
#include "pinpoint/api.h"

namespace pinpoint::k8s {

// pinpointd's `gpus` reply as the plugin sees it: one SliceDevice per device, unhealthy while
// drained (reason: its drain_reason, or "drained") or recovering from an MPS fault.
SliceInventory InventoryFromGpus(const GpusReply& reply);

// The open_lease request for what the kubelet allocated: the devices, their memory (kMemory),
// a name naming the resource and the first IDs (at most kMaxNameBytes), and the lease's user.
OpenLeaseRequest OpenLeaseRequestFor(const LeaseRequest& request, const std::string& lease_user);

// The lease as the kubelet's reply carries it, from pinpointd's reply: CDI name, env, mounts
// (read-write unless marked), device nodes at /dev/<name> inside.
Lease LeaseFromReply(const OpenLeaseReply& reply);

// "L42" -> 42. Errors: kInvalidArgument for anything else.
Result<JobId> ParseLeaseId(const std::string& lease_id);

struct SliceSourceOptions {
  std::string socket_path;  // pinpointd's socket, as the host sees it (the hook uses it)
  std::string cdi_dir = "/var/run/cdi";  // where each lease's CDI spec is written
  std::string hook_path;   // pinpoint-cdi-hook on the host; root's, writable by no one else
  std::string lease_user;  // the user leases are opened for; empty: root
};

// Connects anew for each call, so a restarted pinpointd is found again. Thread-safe (no shared
// connection).
class PinpointSliceSource : public SliceSource {
 public:
  explicit PinpointSliceSource(SliceSourceOptions options) : options_(std::move(options)) {}

  // The `gpus` op. Errors: the client's (kUnavailable when pinpointd is not running).
  Result<SliceInventory> Inventory() override;

  // open_lease, then the lease's CDI spec written to cdi_dir (with the hook that attaches the
  // container and closes the lease when it stops). A spec that cannot be written closes the
  // lease again. Errors: pinpointd's (kFailedPrecondition: does not fit), the client's,
  // kFailedPrecondition for an unsafe hook or CDI directory, kIo.
  Result<Lease> OpenLease(const LeaseRequest& request) override;
  // close_lease and the spec removed. Errors: kInvalidArgument (not "L<n>"), pinpointd's.
  Status CloseLease(const std::string& lease_id) override;

 private:
  SliceSourceOptions options_;
};

}  // namespace pinpoint::k8s
