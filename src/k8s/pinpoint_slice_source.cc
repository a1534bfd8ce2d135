#include "k8s/pinpoint_slice_source.h"

#include "pinpoint/client.h"

namespace pinpoint::k8s {

namespace {
constexpr char kNoLeases[] = "leases not available in this pinpointd";
}  // namespace

SliceInventory InventoryFromGpus(const GpusReply& reply) {
  SliceInventory inventory;
  for (const DeviceView& view : reply.devices) {
    SliceDevice d;
    d.index = view.index;
    d.uuid = view.uuid;
    d.name = view.name;
    d.gpu_index = view.gpu_index;
    d.is_mig = view.is_mig;
    d.mode = view.mode;
    d.mem_bytes = view.mem_bytes;
    if (view.drained) {
      d.healthy = false;
      d.unhealthy_reason = view.drain_reason.value_or("drained");
    } else if (view.recovering) {
      d.healthy = false;
      d.unhealthy_reason = "recovering from an MPS fault";
    }
    inventory.devices.push_back(std::move(d));
  }
  return inventory;
}

Result<SliceInventory> PinpointSliceSource::Inventory() {
  auto client = Client::Connect(socket_path_);
  if (!client.ok()) return client.status();
  auto reply = client->Gpus();
  if (!reply.ok()) return reply.status();
  return InventoryFromGpus(*reply);
}

Result<Lease> PinpointSliceSource::OpenLease(const LeaseRequest& request) {
  return Unavailable(kNoLeases);
}

Status PinpointSliceSource::CloseLease(const std::string& lease_id) {
  return Unavailable(kNoLeases);
}

}  // namespace pinpoint::k8s
