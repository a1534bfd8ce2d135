// The public client API: talks to pinpointd over its Unix socket. The CLI and the batch-system
// integrations use only this (and the types in job.h), never daemon internals.
//
// Protocol (docs/api.md): one JSON object per line each way. A request names an "op"; a reply has
// "ok": true and the op's fields, or "ok": false and "error": {"code", "message"}.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "pinpoint/status.h"

namespace pinpoint {

// Where clients look for the daemon: $PINPOINT_SOCKET, else /run/pinpoint/pinpointd.sock.
std::string DefaultSocketPath();

// Largest message either side accepts, in bytes (the newline excluded).
inline constexpr size_t kMaxMessageBytes = 1 << 20;

// The "queue" op returns one page of jobs (docs/api.md): this many when the request gives no
// "limit" (or 0), and at most kQueueMaxLimit.
inline constexpr int kQueueDefaultLimit = 100;
inline constexpr int kQueueMaxLimit = 10000;

// One connection. Movable, not copyable; closes on destruction. Not thread-safe.
class Client {
 public:
  // Errors: kUnavailable with one line naming the socket ("pinpointd is not running at ...").
  static Result<Client> Connect(const std::string& socket_path);
  Client(Client&& other) noexcept;
  Client& operator=(Client&& other) noexcept;
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client();

  // Sends `request` and waits for the reply (no time limit: "wait" replies come when the job
  // ends). Returns the reply object when "ok" is true; otherwise the error as a Status with the
  // daemon's code and message. Errors of the connection itself: kUnavailable.
  Result<nlohmann::json> Call(const nlohmann::json& request);

 private:
  explicit Client(int fd) : fd_(fd) {}
  // After a failed send: the error line the daemon wrote before closing, if it wrote one.
  std::optional<Status> ReadRefusal();
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace pinpoint
