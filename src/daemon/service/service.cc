#include "daemon/service/service.h"

#include <algorithm>
#include <map>
#include <set>

#include "api/protocol.h"
#include "common/version.h"
#include "daemon/jobs/lifecycle.h"
#include "daemon/jobs/users.h"
#include "daemon/service/job_view.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/rewrite_budget.h"
#include "store/job_store.h"

namespace pinpoint::daemon {

using nlohmann::json;

template <typename Request>
Service::Op Service::Bind(Result<typename Request::Reply> (Service::*handler)(Call&, Request)) {
  return {Request::kOp, [handler](Service* service, Call& call, const json& j) -> Result<json> {
            auto request = FromJson<Request>(j);
            if (!request.ok()) return request.status();
            auto reply = (service->*handler)(call, std::move(request).value());
            if (!reply.ok()) return reply.status();
            return ToJson(*reply);
          }};
}

const std::vector<Service::Op>& Service::Ops() {
  static const std::vector<Op> ops = {
      Bind<VersionRequest>(&Service::Version),
      Bind<SubmitRequest>(&Service::Submit),
      Bind<WaitRequest>(&Service::Wait),
      Bind<QueueRequest>(&Service::Queue),
      Bind<ShowRequest>(&Service::Show),
      Bind<CancelRequest>(&Service::ChangeJobs<CancelRequest>),
      Bind<GpusRequest>(&Service::Gpus),
      Bind<QosRequest>(&Service::Qos),
      Bind<LogsRequest>(&Service::Logs),
      Bind<HoldRequest>(&Service::ChangeJobs<HoldRequest>),
      Bind<ReleaseRequest>(&Service::ChangeJobs<ReleaseRequest>),
      Bind<UpdateArrayRequest>(&Service::ChangeJobs<UpdateArrayRequest>),
      Bind<SuspendRequest>(&Service::Suspend),
      Bind<ResumeRequest>(&Service::Resume),
      Bind<UpdateRequest>(&Service::ChangeJobs<UpdateRequest>),
      Bind<OpenLeaseRequest>(&Service::OpenLease),
      Bind<AttachLeaseRequest>(&Service::AttachLease),
      Bind<CloseLeaseRequest>(&Service::CloseLease),
  };
  return ops;
}

std::optional<json> Service::Handle(const api::Caller& caller, const json& request,
                                    api::ConnId conn) {
  Call call{caller, conn};
  Result<json> reply = Internal("unhandled");
  try {
    reply = Dispatch(call, request);
  } catch (const std::exception& e) {  // a bug must cost one request, never the daemon
    reply = Internal(std::string("internal error: ") + e.what());
  }
  if (call.deferred) return std::nullopt;
  if (!reply.ok()) return api::ErrorReply(reply.status());
  return api::OkReply(*reply);
}

Result<json> Service::Dispatch(Call& call, const json& request) {
  if (!request.is_object() || !request.contains("op") || !request["op"].is_string())
    return InvalidArgument("message has no \"op\" string");
  const std::string& op = request["op"].get_ref<const std::string&>();
  for (const Op& row : Ops()) {
    if (op == row.name) return row.handle(this, call, request);
  }
  return InvalidArgument("unknown op '" + op + "'");
}

void Service::Defer(Call& call, JobId id) {
  waits_.WaitFor(call.conn, call.caller, id);
  call.deferred = true;
}

Result<VersionReply> Service::Version(Call&, VersionRequest) {
  VersionReply reply;
  reply.version = VersionText();  // with its git revision: which build runs, after an upgrade
  reply.backend = node_->options().identity.backend_kind;
  reply.driver = node_->options().identity.driver_version;
  reply.schema = store::JobStore::kCurrentVersion;
  if (metrics_port_ > 0) reply.metrics_port = metrics_port_;
  return reply;
}

Result<QosReply> Service::Qos(Call&, QosRequest) {
  return QosReply{node_->options().admission.qos, node_->options().admission.default_qos};
}

Result<SubmitReply> Service::Submit(Call& call, SubmitRequest request) {
  if (request.array) return SubmitArray(call, std::move(request));
  auto job = node_->Submit(call.caller, std::move(request.request), request.idempotency_key,
                           request.hold, request.from_script);
  if (!job.ok()) return job.status();
  // A retried submit may find its job already ended: nothing would wake a waiter then.
  if (request.wait && !IsFinal(job->state)) {
    Defer(call, job->id);
    return SubmitReply{};
  }
  return SubmitReply{ToView(*job, EnvShown::kFull), std::nullopt};
}

Result<SubmitReply> Service::SubmitArray(Call& call, SubmitRequest request) {
  // One reply would have to wait for every task: clients wait for each (docs/api.md "submit").
  if (request.wait)
    return InvalidArgument("\"wait\" does not go with \"array\": wait for the tasks one by one");
  auto submitted = node_->SubmitArray(call.caller, std::move(request.request), *request.array,
                                      request.idempotency_key, request.hold, request.from_script);
  if (!submitted.ok()) return submitted.status();
  JobId first = submitted->first.id;
  SubmittedArrayView array{first, submitted->count, first, first + submitted->count - 1};
  return SubmitReply{ToView(submitted->first, EnvShown::kFull), array};
}

Result<WaitReply> Service::Wait(Call& call, WaitRequest request) {
  if (!request.ids.empty()) return WaitForAll(call, request.ids);
  // Read without its environment, which a wait's reply omits (as a listing does): a job of a
  // 250 KB environment costs its record, not a decode and a reply of the environment.
  auto job = node_->Get(request.id, /*with_env=*/false);
  if (!job.ok()) return job.status();
  if (IsFinal(job->state)) return WaitReply{ToView(*job, EnvShown::kOmitted), {}};
  PP_RETURN_IF_ERROR(waits_.MayHold(call.caller, 1));
  Defer(call, request.id);
  return WaitReply{};
}

namespace {

// The views of `ids` in their order, each distinct id looked up once and without its environment
// (no view here shows one), from `known` where it has the record: a request that names one id
// 10000 times costs one lookup, not 10000.
Result<std::vector<JobView>> ViewsOf(const Node& node, const std::vector<JobId>& ids,
                                     const std::map<JobId, JobRecord>& known = {}) {
  std::map<JobId, JobView> seen;
  std::vector<JobView> views;
  views.reserve(ids.size());
  for (JobId id : ids) {
    auto it = seen.find(id);
    if (it == seen.end()) {
      auto record = known.find(id);
      if (record != known.end()) {
        it = seen.emplace(id, ToView(record->second, EnvShown::kOmitted, false)).first;
      } else {
        auto job = node.Get(id, /*with_env=*/false);
        if (!job.ok()) return job.status();
        it = seen.emplace(id, ToView(*job, EnvShown::kOmitted, false)).first;
      }
    }
    views.push_back(it->second);  // without enforcement lists: many jobs stay small
  }
  return views;
}

}  // namespace

Result<WaitReply> Service::WaitForAll(Call& call, const std::vector<JobId>& ids) {
  // Each distinct job read once, without its environment (no view here shows one): a request that
  // names a job 10000 times costs one lookup, and one of ended jobs with large environments costs
  // their records without them (it decoded each whole, twice).
  std::map<JobId, JobRecord> records;
  std::set<JobId> running;
  for (JobId id : ids) {
    if (records.count(id)) continue;
    auto job = node_->Get(id, /*with_env=*/false);
    if (!job.ok()) return job.status();
    if (!IsFinal(job->state)) running.insert(id);
    records.emplace(id, std::move(job).value());
  }
  if (running.empty()) {
    auto views = ViewsOf(*node_, ids, records);
    if (!views.ok()) return views.status();
    WaitReply reply;
    reply.jobs = std::move(views).value();
    return reply;
  }
  PP_RETURN_IF_ERROR(waits_.MayHold(call.caller, ids.size()));
  waits_.WaitForAll(call.conn, call.caller, ids, running);
  call.deferred = true;
  return WaitReply{};
}

json Service::WaitAllReply(const std::vector<JobId>& ids) const {
  auto views = ViewsOf(*node_, ids);
  if (!views.ok()) return api::ErrorReply(views.status());
  WaitReply reply;
  reply.jobs = std::move(views).value();
  return api::OkReply(ToJson(reply));
}

Result<QueueReply> Service::Queue(Call&, QueueRequest request) {
  std::optional<uint32_t> uid;
  if (request.user) {
    auto user = node_->UserByName(*request.user);
    if (!user.ok()) return InvalidArgument(user.status().message());
    uid = user->uid;
  }
  // One page at a time, whatever was asked: a reply's cost is bounded (Client pages for more).
  int limit = std::min(request.limit == 0 ? kQueueDefaultLimit : request.limit, kQueuePageMax);
  ListQuery filter{request.names, request.states, request.ids, request.start};
  auto page = node_->List(request.all, uid, request.offset, limit,
                          {request.ended_after_ms, request.ended_before_ms}, filter);
  if (!page.ok()) return page.status();
  QueueReply reply;
  // A listing carries no environments (only `show` does): 1000 jobs stay small whatever they hold.
  for (const auto& job : page->jobs)
    reply.jobs.push_back(ToView(job, EnvShown::kOmitted, request.enforcement));
  reply.backend = node_->options().identity.backend_kind;
  reply.total = page->total;
  reply.offset = request.offset;
  reply.limit = limit;
  reply.more =
      std::max<int64_t>(0, page->total - request.offset - static_cast<int64_t>(reply.jobs.size()));
  reply.more_tasks = page->tasks_after;
  for (const auto& e : page->starts) reply.starts.push_back({e.id, e.start_ms, e.why});
  return reply;
}

Result<ShowReply> Service::Show(Call& call, ShowRequest request) {
  auto job = node_->Get(request.id);
  if (!job.ok()) return job.status();
  ShowReply reply{ViewFor(call.caller, *job), {}};
  auto events = node_->Events(request.id);
  if (events.ok()) {
    for (const auto& e : *events) reply.events.push_back({e.time_ms, e.kind, e.detail});
  }
  return reply;
}

Result<GpusReply> Service::Gpus(Call&, GpusRequest) { return node_->GpusView(); }

Result<LogsReply> Service::Logs(Call& call, LogsRequest request) {
  // Logs are bytes; the server replaces invalid UTF-8 when it writes the reply.
  auto reply = node_->Logs(call.caller, request);
  if (!reply.ok() || !request.follow || !reply->data.empty() || reply->ended) return reply;
  PP_RETURN_IF_ERROR(followers_.MayFollow(call.caller));
  request.from_offset = reply->end_offset;  // where a truncated file starts again
  followers_.Follow(call.conn, call.caller, std::move(request));
  call.deferred = true;
  return LogsReply{};
}

void Service::PollFollowers() {
  followers_.Poll([this](const api::Caller& caller,
                         const LogsRequest& request) { return node_->Logs(caller, request); },
                  reply_);
}

void Service::Closed(api::ConnId conn) {
  for (LeaseWaiter& w : starting_leases_) w.client_gone = w.client_gone || w.conn == conn;
  array_work_.Closed(conn);
  waits_.Closed(conn);
  followers_.Closed(conn);
}

void Service::JobsEnded(const std::vector<JobId>& ids) {
  for (JobId id : ids) {
    std::optional<Result<JobRecord>> job;  // read once, for the waits of this job alone
    for (const WaitBook::Answer& answer : waits_.JobEnded(id)) {
      if (!reply_) continue;
      if (!answer.ids.empty()) {
        reply_(answer.conn, WaitAllReply(answer.ids));
        continue;
      }
      if (!job) job = node_->Get(id, /*with_env=*/false);
      reply_(answer.conn,
             job->ok() ? api::OkReply(ToJson(WaitReply{ToView(**job, EnvShown::kOmitted), {}}))
                       : api::ErrorReply(job->status()));
    }
  }
}

Result<OpenLeaseReply> Service::OpenLease(Call& call, OpenLeaseRequest request) {
  auto opened = node_->OpenLease(call.caller, request.request);
  if (!opened.ok()) return opened.status();
  if (opened->lease.state == JobState::kPending) {
    // Its MPS control daemon is starting: answered once the lease runs or is given up.
    call.deferred = true;
    starting_leases_.push_back({call.conn, call.caller, opened->lease.id});
    return OpenLeaseReply{};
  }
  return OpenLeaseReply{ViewFor(call.caller, opened->lease), std::move(opened->edits)};
}

void Service::PollStartingLeases() {
  std::erase_if(starting_leases_, [&](const LeaseWaiter& w) {
    auto lease = node_->Get(w.lease);
    if (lease.ok() && lease->state == JobState::kPending) return false;
    if (!reply_ || w.client_gone) return true;
    if (lease.ok() && lease->state == JobState::kRunning) {
      reply_(w.conn, api::OkReply(ToJson(
                         OpenLeaseReply{ViewFor(w.caller, *lease), node_->EditsOfLease(w.lease)})));
    } else {
      std::string why = lease.ok() ? lifecycle::Why(*lease) : lease.status().message();
      reply_(w.conn, api::ErrorReply(Unavailable("no room for a lease now: " + why)));
    }
    return true;
  });
}

Result<AttachLeaseReply> Service::AttachLease(Call& call, AttachLeaseRequest request) {
  auto lease = node_->AttachLease(call.caller, request.id, request.pid, request.container_uid);
  if (!lease.ok()) return lease.status();
  return AttachLeaseReply{ViewFor(call.caller, *lease)};
}

Result<CloseLeaseReply> Service::CloseLease(Call& call, CloseLeaseRequest request) {
  auto lease = node_->CloseLease(call.caller, request.id);
  if (!lease.ok()) return lease.status();
  return CloseLeaseReply{ViewFor(call.caller, *lease)};
}

}  // namespace pinpoint::daemon
