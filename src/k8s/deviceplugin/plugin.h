// pinpoint-k8s as a whole: serves the DevicePlugin service of both resources on their sockets in
// the kubelet's device-plugins directory, registers them with the kubelet, keeps the device
// lists current (polling pinpointd), and serves and registers again when the kubelet restarts.
#pragma once

#include <grpcpp/grpcpp.h>
#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "k8s/device/device_state.h"
#include "k8s/device/slice_source.h"
#include "k8s/deviceplugin/device_plugin_service.h"
#include "k8s/deviceplugin/dir_watcher.h"

namespace pinpoint::k8s {

struct PluginOptions {
  std::string kubelet_dir = "/var/lib/kubelet/device-plugins";
  std::string kubelet_socket = "kubelet.sock";  // its name in kubelet_dir
  uint64_t mem_unit_bytes = uint64_t{1} << 30;
  int poll_interval_ms = 2000;  // how often pinpointd's devices are read
  int register_timeout_ms = 10000;
};

// The largest message the plugin's servers accept (the kubelet's largest, an AllocateRequest
// of a node's every unit, is far below it).
inline constexpr int kMaxMessageBytes = 4 << 20;

// Errors for options no plugin can run with: kInvalidArgument naming the option.
Status ValidateOptions(const PluginOptions& options);

class Plugin {
 public:
  // `source` outlives the plugin.
  Plugin(PluginOptions options, SliceSource& source);
  ~Plugin();  // Stop()
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  // Reads pinpointd's devices once, serves both sockets, registers both resources, and starts
  // the poll and watch threads. A registration that fails (no kubelet yet) is not an error: it
  // is tried again when kubelet.sock appears and at every poll. Errors: kInvalidArgument for
  // bad options; kIo when the directory cannot be watched or a socket not served.
  Status Start();
  // Deregisters nothing (the kubelet notices the sockets going), stops the servers, removes
  // the sockets, joins the threads. Idempotent.
  void Stop();

  // Wakes the poll thread to read pinpointd now. Thread-safe.
  void PollNow();

 private:
  struct Served {
    std::unique_ptr<DevicePluginService> service;
    std::unique_ptr<grpc::Server> server;
    ino_t socket_inode = 0;
    bool registered = false;
  };

  std::string SocketPath(Resource resource) const;
  Status Serve(Resource resource);     // under serve_mu_
  void Unserve(Resource resource);     // under serve_mu_
  Status Register(Resource resource);  // under serve_mu_
  void RegisterMissing();              // takes serve_mu_
  // Serves the resource again if its socket is gone (and then registers it); registers it
  // anyway when `register_anyway`. Takes serve_mu_.
  void ServeAgain(Resource resource, bool register_anyway);
  void PollLoop();
  void WatchLoop();
  void OnEvent(const DirEvent& event);

  PluginOptions options_;
  SliceSource& source_;
  DeviceState state_;
  std::optional<DirWatcher> watcher_;

  std::mutex serve_mu_;
  Served served_[2];

  std::mutex poll_mu_;
  std::condition_variable poll_cv_;
  bool poll_now_ = false;
  std::atomic<bool> stopping_{false};
  bool started_ = false;
  std::thread poll_thread_;
  std::thread watch_thread_;
};

}  // namespace pinpoint::k8s
