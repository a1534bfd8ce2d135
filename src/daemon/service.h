// Service: the daemon's request handler. Maps each API op (docs/api.md) onto the Node through one
// table of {op, handler}: a handler gets its request decoded by the API codec (api_codec.h) and
// returns its typed reply, which the codec encodes. Keeps deferred replies for "wait" (and
// "submit" with "wait": true) until their job ends (a "wait" with "ids": until the last of its
// jobs ends; at most kWaitMaxHeldIds ids held, kWaitMaxHeldIdsPerUid per user), and for "logs"
// with "follow" until there is new output or the job has ended (at most kLogsMaxFollowers,
// kLogsMaxFollowersPerUid per user).
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "api/server.h"
#include "daemon/node.h"
#include "pinpoint/api.h"

namespace pinpoint::daemon {

// Requests on job arrays (cancel, hold, release of an array's id) in progress at once: in all
// (root keeps a share, common/root_reserve.h) and of one user other than root.
inline constexpr size_t kArrayWorkMax = 64;
inline constexpr size_t kArrayWorkMaxPerUid = 4;

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

  // Answers one request; nullopt when the answer waits for a job (JobsEnded sends it). Never
  // throws: a handler's exception becomes an "internal" error reply.
  std::optional<nlohmann::json> Handle(const api::Caller& caller, const nlohmann::json& request,
                                       api::ConnId conn) override;
  void Closed(api::ConnId conn) override;

  // Answers the waiters of jobs that ended: a wait for several jobs once the last has ended.
  void JobsEnded(const std::vector<JobId>& ids);
  // Job ids held by unanswered waits, in all (for tests and the bounds).
  size_t held_wait_ids() const { return held_wait_ids_; }
  // Answers the log followers whose stream has new bytes, whose job has ended, or whose read
  // fails (e.g. the file became a link). Called once per pass of the main loop. Cost: one
  // bounded read (an open and a stat when nothing is new) per follower held.
  void PollFollowers();
  // Goes on with the requests on job arrays in progress (one budget's worth) and answers the one
  // that completes. Called by the main loop once per pass; while has_array_work(), the loop does
  // not sleep between passes.
  void ContinueArrayWork();
  bool has_array_work() const { return !array_work_.empty(); }
  // Answers the open_lease requests whose lease waited for its MPS control daemon (Node::OpenLease)
  // and has started or been given up. Called by the main loop once per pass.
  void PollStartingLeases();
  size_t follower_count() const { return followers_.size(); }

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
  // Refuses to hold `count` more waited-for ids for `caller` past the bounds: kUnavailable.
  Status MayHoldWait(const api::Caller& caller, size_t count) const;
  // The reply to a wait for several jobs: each as it is now (env_shown kOmitted).
  nlohmann::json WaitAllReply(const std::vector<JobId>& ids) const;

  Result<VersionReply> Version(Call& call, VersionRequest request);
  Result<SubmitReply> Submit(Call& call, SubmitRequest request);
  Result<SubmitReply> SubmitArray(Call& call, SubmitRequest request);
  Result<WaitReply> Wait(Call& call, WaitRequest request);
  Result<QueueReply> Queue(Call& call, QueueRequest request);
  Result<ShowReply> Show(Call& call, ShowRequest request);
  Result<CancelReply> Cancel(Call& call, CancelRequest request);
  // service_arrays.cc: "cancel", "hold", "release", "update" or "update_array" of job arrays (the requests' `arrays`), one result per array
  // after those of `ids`: as much as one request of ids may do (kCancelMaxIds jobs, one rewrite
  // budget of kRewriteBytesPerRequest) at a time, the
  // first now, the rest from the main loop (ContinueArrayWork) with the reply deferred, so that
  // an array of 10000 tasks never holds the loop for long.
  struct ArrayWork {
    api::ConnId conn;
    api::Caller caller;
    ArrayTasks::Change change;
    std::vector<CancelResult> results;  // done so far, in the reply's order
    std::vector<JobId> arrays;
    size_t next = 0;                    // arrays[next] is being worked on
    CancelResult current = {};          // its result so far
    bool client_gone = false;           // its connection closed: the work goes on, unanswered
    JobEdit edit = {};                  // kUpdate: what every task gets
    std::set<JobId> refused = {};       // tasks of arrays[next] the change refused: not tried again
    Status first_refusal = {};          // the first kFailedPrecondition of them: the answer if none changed
  };
  template <typename Reply>
  Result<Reply> StartArrayWork(Call& call, ArrayTasks::Change change, std::vector<CancelResult> results,
                               const std::vector<JobId>& arrays, Reply& reply, const JobEdit& edit = {});
  // The tasks of array `id` the work still has to change (ArrayTasks::For, less those refused);
  // nullopt when `id` names no array.
  std::optional<std::vector<JobId>> TasksLeft(const ArrayWork& work, JobId id) const;
  // One budget's worth of `work`; true once every array of it has its result.
  bool AdvanceArrayWork(ArrayWork& work);
  std::vector<Status> ApplyToTasks(const ArrayWork& work, const std::vector<JobId>& ids, uint64_t budget);
  Status ArrayNoneLeft(const ArrayWork& work, JobId id);
  Result<GpusReply> Gpus(Call& call, GpusRequest request);
  Result<LogsReply> Logs(Call& call, LogsRequest request);
  Result<HoldReply> Hold(Call& call, HoldRequest request);
  Result<ReleaseReply> Release(Call& call, ReleaseRequest request);
  Result<UpdateArrayReply> UpdateArray(Call& call, UpdateArrayRequest request);
  Result<UpdateReply> Update(Call& call, UpdateRequest request);

  // Refuses one more follower for `caller` past the caps: kUnavailable.
  Status MayFollow(const api::Caller& caller) const;

  // A "logs" request with "follow" waiting for output; its from_offset is where to read next.
  struct Follower {
    api::ConnId conn;
    api::Caller caller;
    LogsRequest request;
  };
  Result<OpenLeaseReply> OpenLease(Call& call, OpenLeaseRequest request);
  Result<AttachLeaseReply> AttachLease(Call& call, AttachLeaseRequest request);
  Result<CloseLeaseReply> CloseLease(Call& call, CloseLeaseRequest request);

  // A deferred wait: its connection and caller, and for a wait with "ids" its group.
  struct Waiter {
    api::ConnId conn;
    api::Caller caller;
    uint64_t group = 0;  // 0: a wait for this one job
  };
  // A wait with "ids": the ids in the order asked, and how many distinct ones have not ended.
  struct WaitGroup {
    api::ConnId conn;
    api::Caller caller;
    std::vector<JobId> ids;
    size_t left = 0;
  };
  // Counts `count` waited-for ids as held for `caller` (MayHoldWait's bounds), and gives them back.
  void Hold(const api::Caller& caller, size_t count);
  void ReleaseHeld(const api::Caller& caller, size_t count);

  Node* node_;
  ReplySink reply_;
  int metrics_port_ = 0;
  std::map<JobId, std::vector<Waiter>> waiters_;  // jobs not yet ended -> who waits for them
  std::map<uint64_t, WaitGroup> groups_;
  uint64_t next_group_ = 1;
  size_t held_wait_ids_ = 0;                      // ids of the waits held, groups' in full
  std::map<uint32_t, size_t> held_wait_ids_by_uid_;
  std::vector<Follower> followers_;
  std::deque<ArrayWork> array_work_;  // at most kArrayWorkMax, kArrayWorkMaxPerUid of one user
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
