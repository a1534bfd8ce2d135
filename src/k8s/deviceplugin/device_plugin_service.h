// The DevicePlugin gRPC service of one resource (pinpoint.io/gpu or pinpoint.io/gpu-mem), as
// the kubelet calls it on the plugin's socket. Handlers run on gRPC's threads; the service only
// reads the shared DeviceState and calls the SliceSource.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>

#include "deviceplugin.grpc.pb.h"
#include "k8s/device/device_state.h"
#include "k8s/device/slice_source.h"

namespace pinpoint::k8s {

// The most ListAndWatch streams one resource serves at once (the kubelet keeps one).
inline constexpr int kMaxWatchers = 4;

// A pinpoint Status as a gRPC one: same meaning, same message.
grpc::Status ToGrpc(const Status& status);

class DevicePluginService final : public v1beta1::DevicePlugin::Service {
 public:
  // `state` and `source` outlive the service.
  DevicePluginService(Resource resource, DeviceState& state, SliceSource& source)
      : resource_(resource), state_(state), source_(source) {}

  // Ends every ListAndWatch stream (they return OK) and refuses new ones: call before the
  // server's Shutdown, which waits for running handlers.
  void Stop();

  // GetPreferredAllocationAvailable: true; PreStartContainer is not needed.
  grpc::Status GetDevicePluginOptions(grpc::ServerContext* context, const v1beta1::Empty* request,
                                      v1beta1::DevicePluginOptions* reply) override;
  // The resource's devices at once, then again each time the list changes (a device added,
  // gone, or changed health), until the kubelet hangs up or Stop. RESOURCE_EXHAUSTED past
  // kMaxWatchers streams.
  grpc::Status ListAndWatch(grpc::ServerContext* context, const v1beta1::Empty* request,
                            grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) override;
  // PreferredAllocation (allocation.h) per container. INVALID_ARGUMENT past kMaxContainers
  // containers or kMaxDeviceIds IDs; FAILED_PRECONDITION when no GPU can hold the units.
  grpc::Status GetPreferredAllocation(grpc::ServerContext* context,
                                      const v1beta1::PreferredAllocationRequest* request,
                                      v1beta1::PreferredAllocationResponse* reply) override;
  // One lease per container (PlanLease, then SliceSource::OpenLease): the reply carries the
  // lease's CDI device names and its env, mounts and device nodes. All or nothing: when one
  // container fails, the leases opened for the others are closed and the error returned.
  grpc::Status Allocate(grpc::ServerContext* context, const v1beta1::AllocateRequest* request,
                        v1beta1::AllocateResponse* reply) override;
  // Not asked for at registration; answers OK if called.
  grpc::Status PreStartContainer(grpc::ServerContext* context,
                                 const v1beta1::PreStartContainerRequest* request,
                                 v1beta1::PreStartContainerResponse* reply) override;

 private:
  Resource resource_;
  DeviceState& state_;
  SliceSource& source_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> watchers_{0};
};

}  // namespace pinpoint::k8s
