#include "k8s/deviceplugin/device_plugin_service.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "common/log.h"
#include "k8s/device/allocation.h"

namespace pinpoint::k8s {

namespace {

template <typename Repeated>
std::vector<std::string> ToVector(const Repeated& ids) {
  return std::vector<std::string>(ids.begin(), ids.end());
}

void FillResponse(const Lease& lease, v1beta1::ContainerAllocateResponse* out) {
  for (const std::string& name : lease.cdi_devices) out->add_cdi_devices()->set_name(name);
  for (const auto& [name, value] : lease.env) (*out->mutable_envs())[name] = value;
  for (const LeaseMount& m : lease.mounts) {
    v1beta1::Mount* mount = out->add_mounts();
    mount->set_container_path(m.container_path);
    mount->set_host_path(m.host_path);
    mount->set_read_only(m.read_only);
  }
  for (const LeaseDeviceNode& n : lease.device_nodes) {
    v1beta1::DeviceSpec* spec = out->add_devices();
    spec->set_container_path(n.container_path);
    spec->set_host_path(n.host_path);
    spec->set_permissions(n.permissions);
  }
  (*out->mutable_annotations())["pinpoint.io/lease"] = lease.id;
}

}  // namespace

grpc::Status ToGrpc(const Status& status) {
  grpc::StatusCode code = grpc::StatusCode::UNKNOWN;
  switch (status.code()) {
    case Code::kOk:
      return grpc::Status::OK;
    case Code::kInvalidArgument:
      code = grpc::StatusCode::INVALID_ARGUMENT;
      break;
    case Code::kNotFound:
      code = grpc::StatusCode::NOT_FOUND;
      break;
    case Code::kPermissionDenied:
      code = grpc::StatusCode::PERMISSION_DENIED;
      break;
    case Code::kUnavailable:
      code = grpc::StatusCode::UNAVAILABLE;
      break;
    case Code::kFailedPrecondition:
      code = grpc::StatusCode::FAILED_PRECONDITION;
      break;
    case Code::kIo:
      code = grpc::StatusCode::UNAVAILABLE;
      break;
    case Code::kInternal:
      code = grpc::StatusCode::INTERNAL;
      break;
  }
  return grpc::Status(code, status.message());
}

void DevicePluginService::Stop() {
  stopping_ = true;
  state_.WakeAll();
}

grpc::Status DevicePluginService::GetDevicePluginOptions(grpc::ServerContext*,
                                                         const v1beta1::Empty*,
                                                         v1beta1::DevicePluginOptions* reply) {
  reply->set_pre_start_required(false);
  reply->set_get_preferred_allocation_available(true);
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::ListAndWatch(
    grpc::ServerContext* context, const v1beta1::Empty*,
    grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) {
  if (++watchers_ > kMaxWatchers) {
    --watchers_;
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        fmt::format("{}: at most {} ListAndWatch streams at once",
                                    ResourceName(resource_), kMaxWatchers));
  }
  auto stop = [&] { return stopping_.load() || context->IsCancelled(); };
  uint64_t seen = 0;
  bool first = true;
  while (!stop()) {
    if (!first && !state_.WaitForChange(resource_, seen, stop)) break;
    first = false;
    DeviceState::Snapshot snapshot = state_.Current(resource_);
    seen = snapshot.generation;
    v1beta1::ListAndWatchResponse response;
    for (const PluginDevice& d : snapshot.devices) {
      v1beta1::Device* device = response.add_devices();
      device->set_id(d.id);
      device->set_health(d.healthy ? kHealthy : kUnhealthy);
    }
    if (!writer->Write(response)) break;  // the kubelet hung up
  }
  --watchers_;
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::GetPreferredAllocation(
    grpc::ServerContext*, const v1beta1::PreferredAllocationRequest* request,
    v1beta1::PreferredAllocationResponse* reply) {
  if (request->container_requests_size() > kMaxContainers) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        fmt::format("at most {} containers in one request", kMaxContainers));
  }
  for (const auto& container : request->container_requests()) {
    if (container.available_deviceids_size() > kMaxDeviceIds ||
        container.must_include_deviceids_size() > kMaxDeviceIds) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          fmt::format("at most {} device IDs per container", kMaxDeviceIds));
    }
    auto chosen = state_.WithBook([&](const DeviceBook& book) {
      return PreferredAllocation(resource_, book, ToVector(container.available_deviceids()),
                                 ToVector(container.must_include_deviceids()),
                                 container.allocation_size());
    });
    if (!chosen.ok()) return ToGrpc(chosen.status());
    auto* out = reply->add_container_responses();
    for (const std::string& id : *chosen) out->add_deviceids(id);
  }
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::Allocate(grpc::ServerContext*,
                                           const v1beta1::AllocateRequest* request,
                                           v1beta1::AllocateResponse* reply) {
  if (request->container_requests_size() > kMaxContainers) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        fmt::format("at most {} containers in one request", kMaxContainers));
  }
  std::vector<std::string> opened;
  auto fail = [&](const Status& status) {
    for (const std::string& id : opened) {
      Status closed = source_.CloseLease(id);
      if (!closed.ok()) log::Warn("k8s: closing lease {}: {}", id, closed.message());
    }
    log::Warn("k8s: {}: Allocate refused: {}", ResourceName(resource_), status.message());
    return ToGrpc(status);
  };
  for (const auto& container : request->container_requests()) {
    if (container.devices_ids_size() > kMaxDeviceIds) {
      return fail(InvalidArgument(fmt::format("{}: a container asks for {} devices; at most {}",
                                              ResourceName(resource_), container.devices_ids_size(),
                                              kMaxDeviceIds)));
    }
    auto plan = state_.WithBook([&](const DeviceBook& book) {
      return PlanLease(resource_, book, ToVector(container.devices_ids()));
    });
    if (!plan.ok()) return fail(plan.status());
    auto lease = source_.OpenLease(*plan);
    if (!lease.ok()) return fail(lease.status());
    opened.push_back(lease->id);
    FillResponse(*lease, reply->add_container_responses());
    log::Info("k8s: {}: lease {} for {} devices on GPU(s) {}", ResourceName(resource_), lease->id,
              plan->device_ids.size(), fmt::join(plan->device_indices, ","));
  }
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::PreStartContainer(grpc::ServerContext*,
                                                    const v1beta1::PreStartContainerRequest*,
                                                    v1beta1::PreStartContainerResponse*) {
  return grpc::Status::OK;
}

}  // namespace pinpoint::k8s
