#include "metrics/http_server.h"

#include <httplib.h>
#include <pthread.h>
#include <sys/socket.h>

#include <charconv>
#include <chrono>

#include "metrics/bounded_task_queue.h"

namespace pinpoint::metrics {

Result<std::pair<std::string, int>> ParseListenAddress(const std::string& listen) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return InvalidArgument("metrics address '" + listen + "' must be HOST:PORT");
  std::string host = listen.substr(0, colon);
  std::string port_text = listen.substr(colon + 1);
  if (host.front() == '[') {
    if (host.back() != ']' || host.size() < 3)
      return InvalidArgument("metrics address '" + listen + "': IPv6 host must be in brackets");
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string::npos) {
    return InvalidArgument("metrics address '" + listen + "': put an IPv6 host in brackets");
  }
  int port = -1;
  auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || ptr != port_text.data() + port_text.size() || port < 0 || port > 65535)
    return InvalidArgument("metrics address '" + listen + "': port must be 0..65535");
  return std::make_pair(host, port);
}

MetricsServer::MetricsServer() : server_(std::make_unique<httplib::Server>()) {}

MetricsServer::~MetricsServer() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(const std::string& listen) {
  auto address = ParseListenAddress(listen);
  if (!address.ok()) return address.status();
  std::unique_ptr<MetricsServer> s(new MetricsServer());
  MetricsServer* self = s.get();
  // httplib's default also sets SO_REUSEPORT, which would let a second daemon share the port
  // silently; SO_REUSEADDR alone allows a quick restart.
  s->server_->set_socket_options([](int sock) {
    int one = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  });
  // Bounded: at most kWorkers + kWaiting connections held (bounded_task_queue.h), each for a
  // few seconds at most, whatever a client sends or withholds.
  s->server_->new_task_queue = [self] {
    return new BoundedTaskQueue(kWorkers, kWaiting, &self->most_held_);
  };
  s->server_->set_read_timeout(kIoTimeoutSeconds);
  s->server_->set_write_timeout(kIoTimeoutSeconds);
  s->server_->set_keep_alive_timeout(kIoTimeoutSeconds);
  s->server_->set_keep_alive_max_count(8);
  s->server_->set_payload_max_length(64 * 1024);
  s->server_->Get("/metrics", [self](const httplib::Request&, httplib::Response& res) {
    std::lock_guard lock(self->mu_);
    res.set_content(self->text_, "text/plain; version=0.0.4; charset=utf-8");
  });
  s->server_->Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("pinpointd metrics: /metrics\n", "text/plain");
  });
  const auto& [host, port] = *address;
  int bound = port == 0 ? s->server_->bind_to_any_port(host)
                        : (s->server_->bind_to_port(host, port) ? port : -1);
  if (bound < 0)
    return Unavailable("cannot listen for metrics on " + listen +
                       " (in use, or not an address of this host)");
  s->port_ = bound;
  s->thread_ = std::thread([self] {
    ::pthread_setname_np(::pthread_self(), "pp-metrics");
    self->server_->listen_after_bind();
    self->listen_returned_ = true;
  });
  // httplib's stop() does nothing before the accept loop runs, so a server stopped right after
  // Start would never end: return only once the loop runs (or has already given up).
  while (!s->server_->is_running() && !s->listen_returned_)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return s;
}

size_t MetricsServer::most_connections_held() const { return most_held_.load(); }

void MetricsServer::Publish(std::string text) {
  std::lock_guard lock(mu_);
  text_ = std::move(text);
}

}  // namespace pinpoint::metrics
