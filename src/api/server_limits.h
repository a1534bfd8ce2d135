// The bounds that keep one client of pinpointd's socket from exhausting or stalling the daemon
// (docs/security.md): how many connections one uid and everyone together may hold, with slots only
// root may take; how much unread reply one connection may queue; how long a connection may sit
// without progress. The decisions are pure (no I/O, no clock) so a table test covers them; Server
// applies them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

#include "pinpoint/status.h"

namespace pinpoint::api {

struct ServerLimits {
  // Connections held at once, root's included. Accept beyond it closes the newcomer with an error.
  size_t max_connections = 1024;
  // The last `root_reserved_connections` of max_connections are for uid 0 only, so root's
  // `pinpoint` and the batch-system integrations (which run as root) always get in.
  size_t root_reserved_connections = 32;
  // Connections one non-root uid may hold at once; deferred `wait`s count. Root has no per-uid cap.
  size_t max_connections_per_uid = 64;
  // A connection that makes no progress this long is closed: no request received and no reply
  // byte taken by the client. A connection whose deferred reply (`wait`) is outstanding and that
  // has nothing left to write is waiting on the daemon, not idle, and is never closed for it. 0:
  // never.
  int64_t idle_timeout_ms = 60'000;
  // Unread reply bytes at which the server stops handling a connection's requests until the client
  // reads. One reply may exceed it (a `logs` reply of a few MiB); it bounds queuing more.
  size_t max_reply_backlog_bytes = 4 << 20;
  // Deferred replies one connection may have outstanding before its further requests wait.
  size_t max_deferred_per_connection = 16;
};

// Counts open connections per uid and decides who may open another. Not thread-safe.
class ConnectionLimits {
 public:
  explicit ConnectionLimits(const ServerLimits& limits) : limits_(limits) {}

  // Whether `uid` may open one more connection now. Errors: kUnavailable, with one line a person
  // can act on (which limit, how many are held).
  Status Admit(uint32_t uid) const;
  // Record a connection opened (after Admit said yes) or closed.
  void Opened(uint32_t uid);
  void Closed(uint32_t uid);

  size_t total() const { return total_; }
  size_t of_uid(uint32_t uid) const;

 private:
  ServerLimits limits_;
  size_t total_ = 0;
  std::map<uint32_t, size_t> per_uid_;
};

// What the idle rule looks at for one connection.
struct ConnActivity {
  int64_t last_progress_ms = 0;  // accepted, a request received, or reply bytes taken
  size_t unsent_bytes = 0;       // reply bytes queued, not yet taken by the client
  size_t deferred_replies = 0;   // deferred replies the handler still owes
};

// True when the connection should be closed for lack of progress at `now_ms` (see
// ServerLimits::idle_timeout_ms). A clock that went back counts as no time passed.
bool IdleExpired(const ConnActivity& conn, int64_t now_ms, int64_t idle_timeout_ms);

}  // namespace pinpoint::api
