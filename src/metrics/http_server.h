// MetricsServer: serves the latest published metrics text at GET /metrics over HTTP (cpp-httplib),
// on its own thread. The daemon renders and publishes; requests never touch daemon state.
//
// Thread-safe: Publish may be called from any thread while requests are served.
#pragma once

#include <atomic>
#include <cstddef>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "pinpoint/status.h"

namespace httplib {
class Server;
}

namespace pinpoint::metrics {

class MetricsServer {
 public:
  // Connections served at once, and accepted ones waiting for a worker: the most it holds.
  static constexpr size_t kWorkers = 4;
  static constexpr size_t kWaiting = 12;
  // How long one connection may take to send a request, to take a reply or to stay idle.
  static constexpr time_t kIoTimeoutSeconds = 5;

  // Listens on `listen` ("127.0.0.1:9473", "[::1]:9473", "0.0.0.0:9473"; port 0 picks a free one)
  // and starts serving. Errors: kInvalidArgument for a malformed address, kUnavailable when the
  // address cannot be bound (in use, not local).
  static Result<std::unique_ptr<MetricsServer>> Start(const std::string& listen);
  ~MetricsServer();  // stops serving

  void Publish(std::string text);
  // The bound port (useful with port 0).
  int port() const { return port_; }
  // The most connections held at once so far (at most kWorkers + kWaiting).
  size_t most_connections_held() const;

 private:
  MetricsServer();

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> listen_returned_{false};
  std::atomic<size_t> most_held_{0};  // kept by the accept loop's BoundedTaskQueue
  mutable std::mutex mu_;
  std::string text_;  // guarded by mu_
};

// Splits "host:port" / "[v6]:port". Errors: kInvalidArgument naming what is wrong.
Result<std::pair<std::string, int>> ParseListenAddress(const std::string& listen);

}  // namespace pinpoint::metrics
