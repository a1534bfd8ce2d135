// Server: the daemon's Unix-socket endpoint. Accepts connections, frames lines, identifies each
// caller by SO_PEERCRED, hands requests to a Handler and writes replies without blocking. A reply
// may be deferred (a "wait" request): the handler keeps the connection id and answers later.
//
// Every client is bounded (ServerLimits, docs/security.md): its connections, its unread replies,
// its buffered requests and its time without progress, so no client can exhaust or stall the
// daemon. Buffers cost time linear in the bytes that pass through them.
//
// Single-threaded: everything runs inside RunOnce on the caller's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/caller.h"
#include "api/server_limits.h"
#include "common/clock.h"
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

struct ServerOptions {
  ServerLimits limits;
  // Time for the idle rule; not owned. nullptr: the server's own RealClock.
  Clock* clock = nullptr;
  // Who is at the other end of an accepted socket. Empty: PeerCaller (SO_PEERCRED). Tests set it
  // to play several users over real sockets.
  std::function<Result<Caller>(int fd)> identify;
};

class Server {
 public:
  // Binds `socket_path` (replacing a stale socket file) with mode 0666: everyone may connect;
  // permissions are enforced per request from the peer's credentials. Errors: kIo, or
  // kUnavailable when another daemon is already listening there.
  static Result<std::unique_ptr<Server>> Listen(const std::string& socket_path, Handler* handler,
                                                ServerOptions options = {});
  ~Server();

  // Waits up to timeout_ms for socket activity or for one of `extra_fds` to become readable,
  // serves what is ready, closes connections past the idle rule, and returns the extra fds that
  // are readable. A connection refused by ServerLimits gets one error line ("ok": false, code
  // "unavailable") and is closed. A connection whose unread replies exceed
  // max_reply_backlog_bytes, or that owes max_deferred_per_connection deferred replies, is not
  // read from until that clears; its requests wait in the kernel's socket buffer. Each call reads
  // at most a bounded amount from each connection, and handles a user's requests for at most a few
  // milliseconds (and one request), so a busy client or user cannot starve the others.
  std::vector<int> RunOnce(int timeout_ms, const std::vector<int>& extra_fds);

  // Queues a deferred reply on a connection (no-op when it has closed). Each request the handler
  // deferred is answered exactly once through this.
  void Reply(ConnId conn, const nlohmann::json& reply);

  size_t connection_count() const { return conns_.size(); }
  // Reply bytes queued on `conn` that its client has not taken; 0 for an unknown connection.
  size_t unsent_bytes(ConnId conn) const;
  // Request bytes read from `conn` and not yet handled; 0 for an unknown connection.
  size_t buffered_request_bytes(ConnId conn) const;

 private:
  struct Conn {
    int fd = -1;
    Caller caller;
    // Requests: in[in_pos, ...) is unhandled; no newline lies in [in_pos, scan_pos).
    std::string in;
    size_t in_pos = 0;
    size_t scan_pos = 0;
    // Replies: out[out_pos, ...) is not yet sent.
    std::string out;
    size_t out_pos = 0;
    size_t deferred = 0;  // deferred replies the handler owes
    int64_t last_progress_ms = 0;
    // Nothing more is read: the client sent EOF, or broke the framing. Closed once the requests
    // already read are answered and the replies are out (deferred ones are dropped).
    bool input_done = false;
    bool dead = false;  // close now: the socket failed or a rule closed it
    size_t unsent() const { return out.size() - out_pos; }
    // Index of the newline ending the first unhandled request, or npos. Amortised linear.
    size_t FindLine();
  };
  Server(int listen_fd, std::string path, Handler* handler, ServerOptions options);
  // Accepts waiting connections; returns the ids of those now open.
  std::vector<ConnId> Accept();
  bool WantsInput(Conn& conn) const;
  bool MayHandle(const Conn& conn) const;
  // Whether conn's user has time left in this RunOnce call (kHandleMsPerUserPerRun).
  bool HasTime(const Conn& conn) const;
  bool ReadChunk(Conn& conn);
  void Serve(ConnId id, Conn& conn, bool readable);
  void HandleLines(ConnId id, Conn& conn, size_t* budget);
  void Queue(Conn& conn, const nlohmann::json& reply);
  void WriteTo(Conn& conn);
  void Close(ConnId id);
  int64_t NowMs() { return clock_->NowMs(); }

  int listen_fd_;
  // /dev/null, held as a spare descriptor: when pinpointd is out of descriptors (EMFILE, ENFILE) it
  // is let go for a moment so that a waiting connection can be accepted and refused with a line,
  // rather than left to make the listening socket readable for ever (a busy loop). -1 while spent.
  int spare_fd_ = -1;
  std::string path_;
  Handler* handler_;
  ServerOptions options_;
  RealClock real_clock_;
  Clock* clock_;
  ConnectionLimits limits_;
  std::map<ConnId, Conn> conns_;
  // Time spent handling each user's requests in the current RunOnce call, by uid.
  std::map<uint32_t, int64_t> handled_ms_;
  ConnId next_id_ = 1;
};

}  // namespace pinpoint::api
