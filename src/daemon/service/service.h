// Service: the daemon's request handler. Maps each API op (docs/api.md) onto the Node through one
// table of {op, handler}: a handler gets its request decoded by the API codec (api_codec.h) and
// returns its typed reply, which the codec encodes. The replies that wait have their own homes:
// "wait" (and "submit" with "wait": true) until their jobs end (WaitBook, wait_book.h), "logs"
// with "follow" until there is new output (LogFollowers, log_followers.h), requests on job arrays
// until every task is done (ArrayWorkQueue, array_work.h), and "open_lease" until its MPS control
// daemon is up.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "api/server.h"
#include "daemon/node/node.h"
#include "daemon/service/array_work.h"
#include "daemon/service/log_followers.h"
#include "daemon/service/wait_book.h"
#include "pinpoint/api.h"

namespace pinpoint::daemon {

class Service : public api::Handler {
 public:
  explicit Service(Node* node) : node_(node), array_work_(node) {}
  // Where deferred replies go: a connection id and the reply. Set before serving; until then
  // deferred replies are dropped.
  using ReplySink = std::function<void(api::ConnId, const nlohmann::json&)>;
  void set_reply_sink(ReplySink sink) { reply_ = std::move(sink); }
  // The Prometheus endpoint's port, reported by "version"; 0 when it is off.
  void set_metrics_port(int port) { metrics_port_ = port; }

  // Answers one request; nullopt when the answer waits for a job (JobsEnded sends it). Never
  // throws: a handler's exception becomes an "internal" error reply.
  std::optional<nlohmann::json> Handle(const api::Caller& caller, const nlohmann::json& request,
                                       api::ConnId conn) override;
  void Closed(api::ConnId conn) override;

  // Answers the waiters of jobs that ended: a wait for several jobs once the last has ended.
  void JobsEnded(const std::vector<JobId>& ids);
  // The replies that wait, counted: the job ids held by waits, the log followers, the requests on
  // job arrays in progress (while there are some, the main loop does not sleep between passes).
  struct Waiting {
    size_t wait_ids = 0;
    size_t followers = 0;
    size_t array_requests = 0;
  };
  Waiting waiting() const { return {waits_.held(), followers_.size(), array_work_.size()}; }
  // Answers the log followers whose stream has new bytes, whose job has ended, or whose read
  // fails (e.g. the file became a link). Called once per pass of the main loop. Cost: one
  // bounded read (an open and a stat when nothing is new) per follower held.
  void PollFollowers();
  // Goes on with the requests on job arrays in progress (one budget's worth) and answers the one
  // that completes. Called by the main loop once per pass.
  void ContinueArrayWork();
  // Answers the open_lease requests whose lease waited for its MPS control daemon (Node::OpenLease)
  // and has started or been given up. Called by the main loop once per pass.
  void PollStartingLeases();

 private:
  // The request being handled: who sent it, on which connection, and whether its reply waits.
  struct Call {
    const api::Caller& caller;
    api::ConnId conn;
    bool deferred = false;
  };
  // One row of the table: an op's name and its handler, JSON in and out.
  struct Op {
    const char* name;
    std::function<Result<nlohmann::json>(Service*, Call&, const nlohmann::json&)> handle;
  };
  static const std::vector<Op>& Ops();
  // The row for a typed handler: decodes Request, encodes its Reply.
  template <typename Request>
  static Op Bind(Result<typename Request::Reply> (Service::*handler)(Call&, Request));

  Result<nlohmann::json> Dispatch(Call& call, const nlohmann::json& request);
  // The reply to `call` waits until job `id` ends.
  void Defer(Call& call, JobId id);
  // A "wait" with "ids": answered now when all have ended, else deferred until they have.
  Result<WaitReply> WaitForAll(Call& call, const std::vector<JobId>& ids);
  // The reply to a wait for several jobs: each as it is now (env_shown kOmitted).
  nlohmann::json WaitAllReply(const std::vector<JobId>& ids) const;

  Result<VersionReply> Version(Call& call, VersionRequest request);
  Result<SubmitReply> Submit(Call& call, SubmitRequest request);
  Result<SubmitReply> SubmitArray(Call& call, SubmitRequest request);
  Result<WaitReply> Wait(Call& call, WaitRequest request);
  Result<QueueReply> Queue(Call& call, QueueRequest request);
  Result<ShowReply> Show(Call& call, ShowRequest request);
  // service_arrays.cc: "cancel", "hold", "release", "update" and "update_array": the change on
  // the jobs of `ids` (one result each, at once), then on the tasks of each job array of `arrays`
  // (one result per array after those): the first budget's worth now, the rest from the main loop
  // (ContinueArrayWork, array_work.h) with the reply deferred.
  template <typename Request>
  Result<typename Request::Reply> ChangeJobs(Call& call, Request request);
  // "suspend" and "resume" (service_arrays.cc): root's, on named jobs only.
  Result<SuspendReply> Suspend(Call& call, SuspendRequest request);
  Result<ResumeReply> Resume(Call& call, ResumeRequest request);
  Result<GpusReply> Gpus(Call& call, GpusRequest request);
  Result<QosReply> Qos(Call& call, QosRequest request);
  Result<LogsReply> Logs(Call& call, LogsRequest request);

  Result<OpenLeaseReply> OpenLease(Call& call, OpenLeaseRequest request);
  Result<AttachLeaseReply> AttachLease(Call& call, AttachLeaseRequest request);
  Result<CloseLeaseReply> CloseLease(Call& call, CloseLeaseRequest request);

  Node* node_;
  ReplySink reply_;
  int metrics_port_ = 0;
  WaitBook waits_;
  LogFollowers followers_;
  ArrayWorkQueue array_work_;
  // open_lease requests answered later: at most one per lease the node holds pending.
  struct LeaseWaiter {
    api::ConnId conn;
    api::Caller caller;
    JobId lease = 0;
    bool client_gone = false;
  };
  std::vector<LeaseWaiter> starting_leases_;
};

}  // namespace pinpoint::daemon
