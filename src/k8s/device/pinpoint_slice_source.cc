#include "k8s/device/pinpoint_slice_source.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "cdi/spec.h"
#include "common/file_util.h"
#include "pinpoint/client.h"

namespace pinpoint::k8s {

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

OpenLeaseRequest OpenLeaseRequestFor(const LeaseRequest& request, const std::string& lease_user) {
  OpenLeaseRequest op;
  op.request.gpus = static_cast<int>(request.device_indices.size());
  op.request.devices = request.device_indices;
  op.request.gpu_mem_bytes = request.kind == LeaseKind::kMemory ? request.gpu_mem_bytes : 0;
  op.request.as_user = lease_user;
  std::string name = request.resource;
  for (const std::string& id : request.device_ids) {
    if (name.size() + 1 + id.size() > kMaxNameBytes) break;
    name += (&id == &request.device_ids.front() ? " " : ",") + id;
  }
  op.request.name = name.substr(0, kMaxNameBytes);
  return op;
}

Lease LeaseFromReply(const OpenLeaseReply& reply) {
  Lease lease;
  lease.id = cdi::DeviceName(reply.lease.id);
  lease.cdi_devices = {cdi::QualifiedName(reply.lease.id)};
  lease.env = reply.edits.env;
  for (const pinpoint::LeaseMount& m : reply.edits.mounts) {
    lease.mounts.push_back({m.container_path, m.host_path, m.read_only});
  }
  for (const std::string& host : reply.edits.device_nodes) {
    lease.device_nodes.push_back({"/dev/" + host.substr(host.rfind('/') + 1), host, "rw"});
  }
  return lease;
}

Result<JobId> ParseLeaseId(const std::string& lease_id) {
  JobId id = 0;
  const char* end = lease_id.data() + lease_id.size();
  if (lease_id.size() < 2 || lease_id[0] != 'L' || lease_id[1] == '0') {
    return InvalidArgument("not a lease id: '" + lease_id + "'");
  }
  auto [ptr, ec] = std::from_chars(lease_id.data() + 1, end, id);
  if (ec != std::errc() || ptr != end || id <= 0)
    return InvalidArgument("not a lease id: '" + lease_id + "'");
  return id;
}

Result<SliceInventory> PinpointSliceSource::Inventory() {
  auto client = Client::Connect(options_.socket_path);
  if (!client.ok()) return client.status();
  auto reply = client->Gpus();
  if (!reply.ok()) return reply.status();
  return InventoryFromGpus(*reply);
}

Result<Lease> PinpointSliceSource::OpenLease(const LeaseRequest& request) {
  // The runtime runs the hook as root: refuse before anything is held.
  auto hook = cdi::CheckHookPath(options_.hook_path, 0);
  if (!hook.ok()) return hook.status();
  auto client = Client::Connect(options_.socket_path);
  if (!client.ok()) return client.status();
  auto opened = client->OpenLease(OpenLeaseRequestFor(request, options_.lease_user));
  if (!opened.ok()) return opened.status();
  JobId id = opened->lease.id;
  Status written =
      cdi::SpecDir(options_.cdi_dir)
          .Write(id, cdi::Spec(id, opened->edits, *hook, options_.socket_path, options_.cdi_dir));
  if (!written.ok()) {
    (void)client->CloseLease(CloseLeaseRequest{id});  // no spec: no container could attach it
    return written;
  }
  return LeaseFromReply(*opened);
}

Status PinpointSliceSource::CloseLease(const std::string& lease_id) {
  auto id = ParseLeaseId(lease_id);
  if (!id.ok()) return id.status();
  auto client = Client::Connect(options_.socket_path);
  if (!client.ok()) return client.status();
  auto closed = client->CloseLease(CloseLeaseRequest{*id});
  if (!closed.ok()) return closed.status();
  (void)cdi::SpecDir(options_.cdi_dir).Remove(*id);
  return Status::Ok();
}

}  // namespace pinpoint::k8s
