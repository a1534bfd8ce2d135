// Service's requests on many jobs at once (service.h): cancel, hold, release, update and
// update_array, their ids answered at once and their job arrays worked through from the main
// loop (ArrayWork), one request's budget a pass.
#include <algorithm>

#include "api/protocol.h"
#include "daemon/service.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/rewrite_budget.h"

namespace pinpoint::daemon {

namespace {

// One result per id, as "cancel", "hold", "release" and "update" answer.
std::vector<CancelResult> Results(const std::vector<JobId>& ids, const std::vector<Status>& statuses) {
  std::vector<CancelResult> results;
  for (size_t i = 0; i < ids.size(); ++i) results.push_back({ids[i], statuses[i], 0});
  return results;
}

}  // namespace

Result<CancelReply> Service::Cancel(Call& call, CancelRequest request) {
  CancelReply reply{Results(request.ids, node_->Cancel(call.caller, request.ids, kRewriteBytesPerRequest))};
  return StartArrayWork(call, ArrayTasks::Change::kCancel, std::move(reply.results), request.arrays, reply);
}

Result<HoldReply> Service::Hold(Call& call, HoldRequest request) {
  HoldReply reply{Results(request.ids, node_->HoldJobs(call.caller, request.ids))};
  return StartArrayWork(call, ArrayTasks::Change::kHold, std::move(reply.results), request.arrays, reply);
}

Result<ReleaseReply> Service::Release(Call& call, ReleaseRequest request) {
  ReleaseReply reply{Results(request.ids, node_->ReleaseJobs(call.caller, request.ids))};
  return StartArrayWork(call, ArrayTasks::Change::kRelease, std::move(reply.results), request.arrays, reply);
}

Result<UpdateReply> Service::Update(Call& call, UpdateRequest request) {
  UpdateReply reply{Results(request.ids, node_->UpdateJobs(call.caller, request.ids, request.edit))};
  return StartArrayWork(call, ArrayTasks::Change::kUpdate, std::move(reply.results), request.arrays, reply,
                        request.edit);
}

Result<UpdateArrayReply> Service::UpdateArray(Call& call, UpdateArrayRequest request) {
  UpdateArrayReply reply;
  JobEdit edit;
  edit.array_limit = request.limit;
  return StartArrayWork(call, ArrayTasks::Change::kUpdate, {}, request.arrays, reply, edit);
}

template <typename Reply>
Result<Reply> Service::StartArrayWork(Call& call, ArrayTasks::Change change, std::vector<CancelResult> results,
                                      const std::vector<JobId>& arrays, Reply& reply, const JobEdit& edit) {
  if (arrays.empty()) {
    reply.results = std::move(results);
    return reply;
  }
  PP_RETURN_IF_ERROR(array_work_.MayStart(call.caller));
  ArrayWork work{call.conn, call.caller, change, std::move(results), arrays};
  work.edit = edit;
  work.current.id = arrays.front();
  if (array_work_.Advance(work)) {  // one budget's worth now: a small array is answered at once
    reply.results = std::move(work.results);
    return reply;
  }
  call.deferred = true;
  array_work_.Queue(std::move(work));
  return reply;
}

void Service::ContinueArrayWork() {
  std::optional<ArrayWork> done = array_work_.Continue();
  if (!done || !reply_ || done->client_gone) return;
  reply_(done->conn, api::OkReply(ToJson(CancelReply{std::move(done->results)})));
}

}  // namespace pinpoint::daemon
