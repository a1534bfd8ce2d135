// MetricsServer: serves the latest published metrics text at GET /metrics over HTTP (cpp-httplib),
// on its own thread. The daemon renders and publishes; requests never touch daemon state.
//
// Thread-safe: Publish may be called from any thread while requests are served.
#pragma once

#include <atomic>
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
  // Listens on `listen` ("127.0.0.1:9473", "[::1]:9473", "0.0.0.0:9473"; port 0 picks a free one)
  // and starts serving. Errors: kInvalidArgument for a malformed address, kUnavailable when the
  // address cannot be bound (in use, not local).
  static Result<std::unique_ptr<MetricsServer>> Start(const std::string& listen);
  ~MetricsServer();  // stops serving

  void Publish(std::string text);
  // The bound port (useful with port 0).
  int port() const { return port_; }

 private:
  MetricsServer();

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> listen_returned_{false};
  mutable std::mutex mu_;
  std::string text_;  // guarded by mu_
};

// Splits "host:port" / "[v6]:port". Errors: kInvalidArgument naming what is wrong.
Result<std::pair<std::string, int>> ParseListenAddress(const std::string& listen);

}  // namespace pinpoint::metrics
