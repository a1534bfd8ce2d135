// Server: the daemon's Unix-socket endpoint. Accepts connections, frames lines, identifies each
// caller by SO_PEERCRED, hands requests to a Handler and writes replies without blocking. A reply
// may be deferred (a "wait" request): the handler keeps the connection id and answers later.
//
// Single-threaded: everything runs inside RunOnce on the caller's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/caller.h"
#include "pinpoint/status.h"

namespace pinpoint::api {

using ConnId = uint64_t;

class Handler {
 public:
  virtual ~Handler() = default;
  // Handles one request. Returns the reply, or nullopt to answer later through Server::Reply.
  virtual std::optional<nlohmann::json> Handle(const Caller& caller, const nlohmann::json& request,
                                               ConnId conn) = 0;
  // The connection closed; forget any deferred reply for it.
  virtual void Closed(ConnId conn) = 0;
};

class Server {
 public:
  // Binds `socket_path` (replacing a stale socket file) with mode 0666: everyone may connect;
  // permissions are enforced per request from the peer's credentials. Errors: kIo, or
  // kUnavailable when another daemon is already listening there.
  static Result<std::unique_ptr<Server>> Listen(const std::string& socket_path, Handler* handler);
  ~Server();

  // Waits up to timeout_ms for socket activity or for one of `extra_fds` to become readable,
  // serves what is ready, and returns the extra fds that are readable.
  std::vector<int> RunOnce(int timeout_ms, const std::vector<int>& extra_fds);

  // Queues a reply on a connection (no-op when it has closed).
  void Reply(ConnId conn, const nlohmann::json& reply);

  size_t connection_count() const { return conns_.size(); }

  static constexpr size_t kMaxConnections = 1024;

 private:
  struct Conn {
    int fd = -1;
    Caller caller;
    std::string in;
    std::string out;
    bool closing = false;  // close once `out` is flushed
  };
  Server(int listen_fd, std::string path, Handler* handler);
  void Accept();
  void ReadFrom(ConnId id, Conn& conn);
  void WriteTo(Conn& conn);
  void Close(ConnId id);

  int listen_fd_;
  std::string path_;
  Handler* handler_;
  std::map<ConnId, Conn> conns_;
  ConnId next_id_ = 1;
};

}  // namespace pinpoint::api
