// Service's requests on many jobs at once (service.h): cancel, hold, release, update,
// update_array, suspend and resume, their ids answered at once and their job arrays worked through
// from the main loop (ArrayWork), one request's budget a pass.
#include <algorithm>

#include "api/protocol.h"
#include "daemon/service/service.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/rewrite_budget.h"

namespace pinpoint::daemon {

namespace {

// One result per id, as "cancel", "hold", "release" and "update" answer.
std::vector<CancelResult> Results(const std::vector<JobId>& ids,
                                  const std::vector<Status>& statuses) {
  std::vector<CancelResult> results;
  for (size_t i = 0; i < ids.size(); ++i) results.push_back({ids[i], statuses[i], 0});
  return results;
}

// What each request on many jobs does to its jobs: the change, and for an update what changes.
struct ChangeAsked {
  ArrayTasks::Change change;
  JobEdit edit = {};
};
ChangeAsked ChangeOf(const CancelRequest&) { return {ArrayTasks::Change::kCancel}; }
ChangeAsked ChangeOf(const HoldRequest&) { return {ArrayTasks::Change::kHold}; }
ChangeAsked ChangeOf(const ReleaseRequest&) { return {ArrayTasks::Change::kRelease}; }
ChangeAsked ChangeOf(const UpdateRequest& request) {
  return {ArrayTasks::Change::kUpdate, request.edit};
}
ChangeAsked ChangeOf(const UpdateArrayRequest& request) {
  ChangeAsked asked{ArrayTasks::Change::kUpdate};
  asked.edit.array_limit = request.limit;
  return asked;
}
// The jobs a request names by id (update_array names arrays only).
template <typename Request>
std::vector<JobId> IdsOf(const Request& request) {
  return request.ids;
}
std::vector<JobId> IdsOf(const UpdateArrayRequest&) { return {}; }

}  // namespace

template <typename Request>
Result<typename Request::Reply> Service::ChangeJobs(Call& call, Request request) {
  ChangeAsked asked = ChangeOf(request);
  std::vector<JobId> ids = IdsOf(request);
  typename Request::Reply reply;
  if (!ids.empty())
    reply.results = Results(ids, ApplyChange(*node_, call.caller, asked.change, asked.edit, ids,
                                             kRewriteBytesPerRequest));
  if (request.arrays.empty()) return reply;
  PP_RETURN_IF_ERROR(array_work_.MayStart(call.caller));
  ArrayWork work{call.conn, call.caller, asked.change, std::move(reply.results), request.arrays};
  work.edit = asked.edit;
  work.current.id = request.arrays.front();
  if (array_work_.Advance(work)) {  // one budget's worth now: a small array is answered at once
    reply.results = std::move(work.results);
    return reply;
  }
  call.deferred = true;
  array_work_.Queue(std::move(work));
  return reply;
}

// The ops' table (service.cc) takes these.
template Result<CancelReply> Service::ChangeJobs(Call&, CancelRequest);
template Result<HoldReply> Service::ChangeJobs(Call&, HoldRequest);
template Result<ReleaseReply> Service::ChangeJobs(Call&, ReleaseRequest);
template Result<UpdateReply> Service::ChangeJobs(Call&, UpdateRequest);
template Result<UpdateArrayReply> Service::ChangeJobs(Call&, UpdateArrayRequest);

// A suspend acts on the jobs named alone: an id of `arrays` (what the CLI sends for a plain id) is
// the job of that id, never its array's other tasks.
Result<SuspendReply> Service::Suspend(Call& call, SuspendRequest request) {
  std::vector<JobId> ids = request.ids;
  ids.insert(ids.end(), request.arrays.begin(), request.arrays.end());
  return SuspendReply{Results(ids, node_->SuspendJobs(call.caller, ids))};
}

Result<ResumeReply> Service::Resume(Call& call, ResumeRequest request) {
  std::vector<JobId> ids = request.ids;
  ids.insert(ids.end(), request.arrays.begin(), request.arrays.end());
  return ResumeReply{Results(ids, node_->ResumeJobs(call.caller, ids))};
}

void Service::ContinueArrayWork() {
  std::optional<ArrayWork> done = array_work_.Continue();
  if (!done || !reply_ || done->client_gone) return;
  reply_(done->conn, api::OkReply(ToJson(CancelReply{std::move(done->results)})));
}

}  // namespace pinpoint::daemon
