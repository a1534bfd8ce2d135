// Service: the daemon's request handler. Maps each API op (docs/api.md) onto the Node and keeps
// deferred replies for "wait" (and "submit" with "wait": true) until their job ends.
#pragma once

#include <functional>
#include <map>
#include <vector>

#include "api/server.h"
#include "daemon/node.h"

namespace pinpoint::daemon {

class Service : public api::Handler {
 public:
  explicit Service(Node* node) : node_(node) {}
  // Where deferred replies go: a connection id and the reply. Set before serving; until then
  // deferred replies are dropped.
  using ReplySink = std::function<void(api::ConnId, const nlohmann::json&)>;
  void set_reply_sink(ReplySink sink) { reply_ = std::move(sink); }
  // The server to answer deferred requests through.
  void set_server(api::Server* server) {
    set_reply_sink([server](api::ConnId conn, const nlohmann::json& reply) { server->Reply(conn, reply); });
  }
  // The Prometheus endpoint's port, reported by "version"; 0 when it is off.
  void set_metrics_port(int port) { metrics_port_ = port; }

  std::optional<nlohmann::json> Handle(const api::Caller& caller, const nlohmann::json& request,
                                       api::ConnId conn) override;
  void Closed(api::ConnId conn) override;

  // Answers the waiters of jobs that ended.
  void JobsEnded(const std::vector<JobId>& ids);

 private:
  Result<nlohmann::json> Dispatch(const api::Caller& caller, const nlohmann::json& request,
                                  api::ConnId conn, bool* deferred);

  Node* node_;
  ReplySink reply_;
  int metrics_port_ = 0;
  std::map<JobId, std::vector<std::pair<api::ConnId, api::Caller>>> waiters_;
};

}  // namespace pinpoint::daemon
