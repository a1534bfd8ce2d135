// The public client API: talks to pinpointd over its Unix socket. The CLI and the batch-system
// integrations use only this (and the types in api.h and job.h), never daemon internals.
//
// Protocol (docs/api.md): one JSON object per line each way. A request names an "op"; a reply has
// "ok": true and the op's fields, or "ok": false and "error": {"code", "message"}. The messages
// are the structs of api.h; api_codec.h is their JSON form.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "pinpoint/api.h"
#include "pinpoint/status.h"

namespace pinpoint {

// Where clients look for the daemon: $PINPOINT_SOCKET, else /run/pinpoint/pinpointd.sock.
std::string DefaultSocketPath();

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

  // One method per op (docs/api.md). Each sends its request and waits for the reply, with no
  // time limit: "wait", and "submit" with wait, are answered when the job ends. Errors: the
  // daemon's, as a Status with its code and message; kUnavailable when the connection fails; and
  // kInternal ("malformed reply from pinpointd to show: job.state is not a known job state") for
  // a reply that does not decode (api_codec.h). A request of more than kMaxIdsPerRequest ids
  // (cancel, hold, release, wait) goes as several, and a listing longer than kQueuePageMax as
  // several pages (api.h): the reply is the pieces' put together; after an error in a later piece
  // the earlier pieces have taken effect.
  Result<VersionReply> Version();
  Result<SubmitReply> Submit(const SubmitRequest& request);
  Result<WaitReply> Wait(const WaitRequest& request);
  Result<QueueReply> Queue(const QueueRequest& request);
  Result<ShowReply> Show(const ShowRequest& request);
  Result<CancelReply> Cancel(const CancelRequest& request);
  Result<HoldReply> Hold(const HoldRequest& request);
  Result<ReleaseReply> Release(const ReleaseRequest& request);
  Result<SuspendReply> Suspend(const SuspendRequest& request);
  Result<ResumeReply> Resume(const ResumeRequest& request);
  Result<UpdateArrayReply> UpdateArray(const UpdateArrayRequest& request);
  Result<UpdateReply> Update(const UpdateRequest& request);
  Result<GpusReply> Gpus();
  Result<QosReply> Qos();
  Result<LogsReply> Logs(const LogsRequest& request);
  // Leases (docs/api.md "open_lease", docs/containers.md).
  Result<OpenLeaseReply> OpenLease(const OpenLeaseRequest& request);
  Result<AttachLeaseReply> AttachLease(const AttachLeaseRequest& request);
  Result<CloseLeaseReply> CloseLease(const CloseLeaseRequest& request);

  // Several submits sent back to back, their replies read as they come (pinpointd answers the
  // requests of a connection in order, and takes the ones that arrived together in one pass: a
  // batch's jobs are then placed, recorded and launched together). One result per request, in
  // order, each as Submit's. A request with `wait` is refused (kInvalidArgument, not sent): its
  // reply would come out of order. When the connection fails, that error is the result of every
  // request not answered yet (some of them may have been stored: use an idempotency key to retry
  // them safely).
  std::vector<Result<SubmitReply>> SubmitEach(const std::vector<SubmitRequest>& requests);

  // Sends any JSON object and returns the reply object when "ok" is true (errors as above).
  // Raw on purpose: the tests of the server and of the daemon's input checks send what a typed
  // request cannot hold (unknown ops, fields of the wrong type); programs use the methods above.
  Result<nlohmann::json> Call(const nlohmann::json& request);

  // Makes a call blocked on another thread (a "wait") return kUnavailable at once, and every
  // later call fail; the one method that may be called from another thread.
  void Interrupt();

 private:
  explicit Client(int fd) : fd_(fd) {}
  template <typename Request>
  Result<typename Request::Reply> Send(const Request& request);
  // After a failed send: the error line the daemon wrote before closing, if it wrote one.
  std::optional<Status> ReadRefusal();
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace pinpoint
