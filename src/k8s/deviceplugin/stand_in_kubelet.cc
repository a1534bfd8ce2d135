#include "k8s/deviceplugin/stand_in_kubelet.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

namespace pinpoint::k8s {

void StandInKubelet::Start() {
  Stop();
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    if (entry.is_socket()) ::unlink(entry.path().c_str());
  }
  {
    std::lock_guard lock(mu_);
    by_resource_.clear();
    registrations_ = 0;
  }
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + dir_ + "/" + socket_name_, grpc::InsecureServerCredentials());
  builder.RegisterService(this);
  server_ = builder.BuildAndStart();
}

void StandInKubelet::Stop() {
  if (!server_) return;
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  server_->Wait();
  server_.reset();
  ::unlink((dir_ + "/" + socket_name_).c_str());
}

grpc::Status StandInKubelet::Register(grpc::ServerContext*, const v1beta1::RegisterRequest* request,
                                      v1beta1::Empty*) {
  if (request->version() != "v1beta1") {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "version " + request->version() + " is not supported");
  }
  {
    std::lock_guard lock(mu_);
    by_resource_[request->resource_name()] = *request;
    ++registrations_;
  }
  registered_.notify_all();
  return grpc::Status::OK;
}

std::optional<v1beta1::RegisterRequest> StandInKubelet::WaitForRegistration(
    const std::string& resource_name) {
  std::unique_lock lock(mu_);
  if (!registered_.wait_for(lock, std::chrono::minutes(1),
                            [&] { return by_resource_.count(resource_name) > 0; })) {
    return std::nullopt;
  }
  return by_resource_[resource_name];
}

int StandInKubelet::registrations() const {
  std::lock_guard lock(mu_);
  return registrations_;
}

std::unique_ptr<v1beta1::DevicePlugin::Stub> StandInKubelet::Dial(
    const std::string& endpoint) const {
  auto channel =
      grpc::CreateChannel("unix:" + dir_ + "/" + endpoint, grpc::InsecureChannelCredentials());
  return v1beta1::DevicePlugin::NewStub(channel);
}

}  // namespace pinpoint::k8s
