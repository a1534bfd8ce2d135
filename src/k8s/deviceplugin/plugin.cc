#include "k8s/deviceplugin/plugin.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include "common/log.h"

namespace pinpoint::k8s {

namespace {

constexpr char kApiVersion[] = "v1beta1";

// The inode of the Unix socket at `path`, or 0 when there is none (a link or other file is
// not ours and counts as none).
ino_t SocketInode(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return 0;
  return st.st_ino;
}

}  // namespace

Status ValidateOptions(const PluginOptions& o) {
  if (o.kubelet_dir.empty() || o.kubelet_dir[0] != '/') {
    return InvalidArgument("--kubelet-dir must be an absolute path");
  }
  // The longest socket path, <dir>/pinpoint-gpu-mem.sock, must fit sun_path (108 bytes).
  if (o.kubelet_dir.size() + 1 + std::string(ResourceEndpoint(Resource::kGpuMem)).size() > 107 ||
      o.kubelet_dir.size() + 1 + o.kubelet_socket.size() > 107) {
    return InvalidArgument("--kubelet-dir is too long for a Unix socket path");
  }
  if (o.kubelet_socket.empty() || o.kubelet_socket.find('/') != std::string::npos) {
    return InvalidArgument("--kubelet-socket must be a file name in --kubelet-dir");
  }
  if (o.mem_unit_bytes < (uint64_t{16} << 20) || o.mem_unit_bytes > (uint64_t{1} << 40)) {
    return InvalidArgument("--mem-unit must be 16MiB to 1TiB");
  }
  if (o.poll_interval_ms < 10 || o.poll_interval_ms > 3600000) {
    return InvalidArgument("--poll-interval-ms must be 10 to 3600000");
  }
  if (o.register_timeout_ms < 1) return InvalidArgument("register timeout must be positive");
  return Status::Ok();
}

Plugin::Plugin(PluginOptions options, SliceSource& source)
    : options_(std::move(options)), source_(source), state_(options_.mem_unit_bytes) {}

Plugin::~Plugin() { Stop(); }

std::string Plugin::SocketPath(Resource resource) const {
  return options_.kubelet_dir + "/" + ResourceEndpoint(resource);
}

Status Plugin::Start() {
  if (Status s = ValidateOptions(options_); !s.ok()) return s;
  auto watcher = DirWatcher::Open(options_.kubelet_dir);
  if (!watcher.ok()) return watcher.status();
  watcher_.emplace(std::move(*watcher));
  if (Status s = state_.Refresh(source_); !s.ok()) {
    log::Warn("k8s: reading pinpointd's devices: {}", s.message());
  }
  {
    std::lock_guard lock(serve_mu_);
    for (Resource r : kResources) {
      if (Status s = Serve(r); !s.ok()) {
        for (Resource other : kResources) Unserve(other);
        return s;
      }
    }
    for (Resource r : kResources) {
      if (Status s = Register(r); !s.ok()) {
        log::Warn("k8s: {}: not registered yet: {}", ResourceName(r), s.message());
      }
    }
  }
  started_ = true;
  poll_thread_ = std::thread([this] { PollLoop(); });
  watch_thread_ = std::thread([this] { WatchLoop(); });
  return Status::Ok();
}

void Plugin::Stop() {
  if (!started_) return;
  started_ = false;
  stopping_ = true;
  {
    std::lock_guard lock(poll_mu_);
    poll_now_ = true;
  }
  poll_cv_.notify_all();
  watcher_->Wake();
  poll_thread_.join();
  watch_thread_.join();
  std::lock_guard lock(serve_mu_);
  for (Resource r : kResources) Unserve(r);
}

void Plugin::PollNow() {
  {
    std::lock_guard lock(poll_mu_);
    poll_now_ = true;
  }
  poll_cv_.notify_all();
}

Status Plugin::Serve(Resource resource) {
  Served& s = served_[static_cast<int>(resource)];
  std::string path = SocketPath(resource);
  // A socket left by an earlier run; anything else at the path is not ours to remove.
  if (SocketInode(path) != 0) ::unlink(path.c_str());
  s.service = std::make_unique<DevicePluginService>(resource, state_, source_);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + path, grpc::InsecureServerCredentials());
  builder.RegisterService(s.service.get());
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  grpc::ResourceQuota quota("pinpoint-k8s");
  quota.SetMaxThreads(kMaxWatchers + 8);
  builder.SetResourceQuota(quota);
  s.server = builder.BuildAndStart();
  if (!s.server) {
    s.service.reset();
    return IoError(fmt::format("cannot serve {} on {}", ResourceName(resource), path));
  }
  // Only root (the kubelet) may connect: the directory is the kubelet's, and so is the socket.
  ::chmod(path.c_str(), 0600);
  s.socket_inode = SocketInode(path);
  s.registered = false;
  log::Info("k8s: serving {} on {}", ResourceName(resource), path);
  return Status::Ok();
}

void Plugin::Unserve(Resource resource) {
  Served& s = served_[static_cast<int>(resource)];
  if (!s.server) return;
  s.service->Stop();
  s.server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  s.server->Wait();
  s.server.reset();
  s.service.reset();
  std::string path = SocketPath(resource);
  if (s.socket_inode != 0 && SocketInode(path) == s.socket_inode) ::unlink(path.c_str());
  s.socket_inode = 0;
  s.registered = false;
}

Status Plugin::Register(Resource resource) {
  Served& s = served_[static_cast<int>(resource)];
  std::string kubelet = options_.kubelet_dir + "/" + options_.kubelet_socket;
  if (SocketInode(kubelet) == 0) return Unavailable("no kubelet socket at " + kubelet);
  auto channel = grpc::CreateChannel("unix:" + kubelet, grpc::InsecureChannelCredentials());
  auto stub = v1beta1::Registration::NewStub(channel);
  v1beta1::RegisterRequest request;
  request.set_version(kApiVersion);
  request.set_endpoint(ResourceEndpoint(resource));
  request.set_resource_name(ResourceName(resource));
  request.mutable_options()->set_get_preferred_allocation_available(true);
  request.mutable_options()->set_pre_start_required(false);
  grpc::ClientContext context;
  // The socket may exist a moment before the kubelet listens on it: wait for it to be ready.
  context.set_wait_for_ready(true);
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(options_.register_timeout_ms));
  v1beta1::Empty reply;
  grpc::Status status = stub->Register(&context, request, &reply);
  if (!status.ok()) {
    return Unavailable(fmt::format("registering {} with the kubelet at {}: {}",
                                   ResourceName(resource), kubelet, status.error_message()));
  }
  s.registered = true;
  log::Info("k8s: registered {} with the kubelet", ResourceName(resource));
  return Status::Ok();
}

void Plugin::RegisterMissing() {
  std::lock_guard lock(serve_mu_);
  for (Resource r : kResources) {
    if (stopping_) return;
    Served& s = served_[static_cast<int>(r)];
    // Gone without an event seen (the kubelet removed it): serve anew and register again.
    if (s.server && SocketInode(SocketPath(r)) != s.socket_inode) Unserve(r);
    if (!s.server) {
      if (Status st = Serve(r); !st.ok()) {
        log::Error("k8s: {}", st.message());
        continue;
      }
    }
    if (!s.registered) {
      if (Status st = Register(r); !st.ok()) log::Debug("k8s: {}", st.message());
    }
  }
}

void Plugin::ServeAgain(Resource resource, bool register_anyway) {
  std::lock_guard lock(serve_mu_);
  if (stopping_) return;
  Served& s = served_[static_cast<int>(resource)];
  bool gone = !s.server || SocketInode(SocketPath(resource)) != s.socket_inode;
  if (gone) {
    log::Info("k8s: {} is gone; serving it again", SocketPath(resource));
    Unserve(resource);
    if (Status st = Serve(resource); !st.ok()) {
      log::Error("k8s: {}", st.message());
      return;
    }
  }
  if (!gone && !register_anyway) return;
  if (Status st = Register(resource); !st.ok()) log::Warn("k8s: {}", st.message());
}

void Plugin::PollLoop() {
  while (!stopping_) {
    {
      std::unique_lock lock(poll_mu_);
      poll_cv_.wait_for(lock, std::chrono::milliseconds(options_.poll_interval_ms),
                        [this] { return poll_now_; });
      poll_now_ = false;
    }
    if (stopping_) return;
    if (Status s = state_.Refresh(source_); !s.ok()) {
      log::Warn("k8s: reading pinpointd's devices: {}", s.message());
    }
    RegisterMissing();
  }
}

void Plugin::OnEvent(const DirEvent& event) {
  if (event.created && event.name == options_.kubelet_socket) {
    // A new kubelet knows no plugin, and removed every plugin socket when it started: serve
    // what is gone, register everything. A socket still there is served as it is, so that a
    // kubelet already talking to it is not cut off.
    log::Info("k8s: the kubelet (re)started; registering again");
    for (Resource r : kResources) ServeAgain(r, /*register_anyway=*/true);
    return;
  }
  for (Resource r : kResources) {
    // Our own socket removed (by the kubelet), unless it is here again: serve and register.
    if (!event.created && event.name == ResourceEndpoint(r)) ServeAgain(r, false);
  }
}

void Plugin::WatchLoop() {
  while (!stopping_) {
    auto events = watcher_->Next();
    if (!events.ok()) {
      log::Error("k8s: {}; kubelet restarts are noticed only at the next poll",
                 events.status().message());
      return;
    }
    for (const DirEvent& event : *events) {
      if (stopping_) return;
      OnEvent(event);
    }
  }
}

}  // namespace pinpoint::k8s
