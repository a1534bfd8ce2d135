// For tests: a stand-in for the kubelet's device manager. It serves the real v1beta1
// Registration service on <dir>/kubelet.sock and dials plugins on their sockets with the real
// generated stubs, as the kubelet does.
#pragma once

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "deviceplugin.grpc.pb.h"

namespace pinpoint::k8s {

class StandInKubelet : public v1beta1::Registration::Service {
 public:
  explicit StandInKubelet(std::string dir, std::string socket_name = "kubelet.sock")
      : dir_(std::move(dir)), socket_name_(std::move(socket_name)) {}
  ~StandInKubelet() override { Stop(); }

  // As a starting kubelet does: removes every socket in the directory (the plugins' too), then
  // serves Registration. Forgets the registrations of its previous life.
  void Start();
  // As a stopping kubelet: stops serving and removes kubelet.sock.
  void Stop();

  // Blocks until a plugin has registered `resource_name` since Start and returns its request;
  // nullopt if none comes within a minute (a guard against hanging, not a synchronisation).
  std::optional<v1beta1::RegisterRequest> WaitForRegistration(const std::string& resource_name);
  // How many Register calls arrived since Start.
  int registrations() const;

  // A client of the plugin serving `endpoint` (a RegisterRequest's) in the directory.
  std::unique_ptr<v1beta1::DevicePlugin::Stub> Dial(const std::string& endpoint) const;

  // Refuses versions other than v1beta1, as the kubelet does.
  grpc::Status Register(grpc::ServerContext* context, const v1beta1::RegisterRequest* request,
                        v1beta1::Empty* reply) override;

 private:
  std::string dir_;
  std::string socket_name_;
  std::unique_ptr<grpc::Server> server_;
  mutable std::mutex mu_;
  std::condition_variable registered_;
  std::map<std::string, v1beta1::RegisterRequest> by_resource_;
  int registrations_ = 0;
};

}  // namespace pinpoint::k8s
