// Node's ways in for jobs (node.h): submit and job arrays. Admission (admission.h) checks the
// request; here the idempotency key is looked up, dependencies are checked and the records are
// stored, an array's tasks in one transaction.
#include <algorithm>

#include "common/log.h"
#include "daemon/arrays/job_array.h"
#include "daemon/jobs/array_rest.h"
#include "daemon/jobs/lifecycle.h"
#include "daemon/jobs/script_rights.h"
#include "daemon/node/node.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/escape.h"
#include "sched/placement.h"

namespace pinpoint::daemon {

namespace {

// Keys come from clients and are echoed in errors and stored: short printable ASCII only.
Status ValidateIdempotencyKey(const std::string& key) {
  constexpr size_t kMaxKeyBytes = 128;
  if (key.empty() || key.size() > kMaxKeyBytes ||
      !std::all_of(key.begin(), key.end(), [](char c) { return c > ' ' && c < 0x7f; })) {
    return InvalidArgument(
        "\"idempotency_key\" must be 1 to 128 printable ASCII characters "
        "without spaces");
  }
  return Status::Ok();
}

// A submit's idempotency key as the store keeps it for `caller` (nullopt without a key), and the
// job the caller already submitted with it (nullopt: none). Errors: kInvalidArgument (a key
// that breaks docs/api.md's rules), the store's.
struct KeyedSubmit {
  std::optional<store::IdempotencyKey> key;
  std::optional<JobRecord> first;
};
Result<KeyedSubmit> LookUpKey(store::JobStore& store, const api::Caller& caller,
                              const std::optional<std::string>& idempotency_key) {
  KeyedSubmit keyed;
  if (!idempotency_key) return keyed;
  PP_RETURN_IF_ERROR(ValidateIdempotencyKey(*idempotency_key));
  keyed.key = store::IdempotencyKey{caller.uid, *idempotency_key};
  auto first = store.FindByIdempotencyKey(*keyed.key);
  if (!first.ok()) return first.status();
  keyed.first = std::move(first).value();
  return keyed;
}

// The reply to a submit whose key found `first`: the job as it is now (from `jobs` while it is
// active), or kFailedPrecondition when `same` is false (the key was used for another request).
Result<JobRecord> Resubmitted(const JobTable& jobs, const JobRecord& first, bool same) {
  if (!same) {
    return FailedPrecondition("idempotency key already used for job " + std::to_string(first.id) +
                              ", which asked for something else; use a new key for a new job");
  }
  auto active = jobs.find(first.id);
  return active != jobs.end() ? active->second : first;
}

// The names of environment variables env_deny dropped from job `id`'s request, as its event.
void NoteDroppedEnv(store::JobStore& store, int64_t now_ms, JobId id,
                    const std::vector<std::string>& names) {
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + EscapeForTerminal(n);
  store::JobEvent e{id, now_ms, "env-dropped",
                    "not stored (they match the node's env_deny): " + list};
  Status s = store.AppendEvent(e);
  if (!s.ok()) log::Warn("job {}: {}", id, s.ToString());
}

// What Submit and SubmitArray store: Admission::Admit's record (for `count` jobs) with its
// dependencies checked (Dependencies::Check), pending since now_ms, and held when `hold` (a root
// hold for root). The fields `from_script` names are judged with the job's user's rights
// (ScriptRights): a --hold from a user's script is that user's hold.
Result<JobRecord> NewPendingJob(const Admission& admission, const Dependencies& dependencies,
                                const JobTable& jobs, int64_t now_ms, const api::Caller& caller,
                                JobRequest request, bool hold, const ScriptOrigins& from_script,
                                size_t count = 1) {
  auto admitted = admission.Admit(caller, std::move(request), jobs, count, from_script);
  if (!admitted.ok()) return admitted.status();
  JobRecord r = std::move(admitted).value();
  using F = ScriptField;
  ScriptRights rights(caller, r.uid, r.gid, r.user, from_script);
  PP_RETURN_IF_ERROR(
      rights.Explain(dependencies.Check(rights.For({F::kAfter, F::kAfterOk}), r.request),
                     {F::kAfter, F::kAfterOk}));
  lifecycle::Submitted(r, now_ms);
  if (hold) r.hold = rights.For({F::kHold}).IsRoot() ? Hold::kRoot : Hold::kUser;
  return r;
}

}  // namespace

Result<JobRecord> Node::Submit(const api::Caller& caller, JobRequest request,
                               const std::optional<std::string>& idempotency_key, bool hold,
                               const ScriptOrigins& from_script) {
  auto dropped = admission_.Prepare(request);
  if (!dropped.ok()) return dropped.status();
  auto keyed = LookUpKey(*deps_.store, caller, idempotency_key);
  if (!keyed.ok()) return keyed.status();
  std::optional<store::IdempotencyKey> key = keyed->key;
  if (const std::optional<JobRecord>& first = keyed->first)
    return Resubmitted(jobs_, *first, first->array.array_id == 0 && first->request == request);
  auto pending = NewPendingJob(admission_, dependencies_, jobs_, deps_.clock->NowMs(), caller,
                               std::move(request), hold, from_script);
  if (!pending.ok()) return pending.status();
  JobRecord r = std::move(pending).value();
  auto id = deps_.store->Insert(r, key);
  if (!id.ok()) return id.status();
  r.id = *id;
  if (r.hold != Hold::kNone) lifecycle::Waiting(r, Reason::kHeld, sched::HeldDetail(r.id, r.hold));
  if (!dropped->empty()) NoteDroppedEnv(*deps_.store, deps_.clock->NowMs(), r.id, *dropped);
  jobs_.Add(r);
  dirty_ = true;
  return r;
}

Result<Node::SubmittedArray> Node::SubmitArray(const api::Caller& caller, JobRequest request,
                                               const ArraySpec& spec,
                                               const std::optional<std::string>& idempotency_key,
                                               bool hold, const ScriptOrigins& from_script) {
  // As Submit; every task has the same request (its time limit and dependencies too).
  auto dropped = admission_.PrepareArray(request, spec);
  if (!dropped.ok()) return dropped.status();
  auto keyed = LookUpKey(*deps_.store, caller, idempotency_key);
  if (!keyed.ok()) return keyed.status();
  if (const std::optional<JobRecord>& found = keyed->first) {
    auto first =
        Resubmitted(jobs_, *found, IsFirstTaskOf(*found, spec) && found->request == request);
    if (!first.ok()) return first.status();
    auto task = arrays_.Job(first->id);  // a rest as its first task
    if (!task.ok()) return task.status();
    return SubmittedArray{std::move(task).value(), found->array.count};
  }
  auto job = NewPendingJob(admission_, dependencies_, jobs_, deps_.clock->NowMs(), caller,
                           std::move(request), hold, from_script, spec.indices.size());
  if (!job.ok()) return job.status();
  // One record, the array's rest (array_rest.h), for all of its tasks; each is taken out as a job
  // of its own under its reserved id when it starts.
  JobRecord rest = NewArrayRest(*job, spec);
  int count = static_cast<int>(spec.indices.size());
  auto id = deps_.store->InsertArray(rest, count, keyed->key);
  if (!id.ok()) return id.status();
  rest.id = rest.array.array_id = *id;
  if (rest.hold != Hold::kNone)
    lifecycle::Waiting(rest, Reason::kHeld, sched::HeldDetail(rest.id, rest.hold));
  if (!dropped->empty()) NoteDroppedEnv(*deps_.store, deps_.clock->NowMs(), *id, *dropped);
  jobs_.Add(rest);
  dirty_ = true;
  auto first = arrays_.Job(*id);  // the rest as its first task
  if (!first.ok()) return first.status();
  return SubmittedArray{std::move(first).value(), count};
}

}  // namespace pinpoint::daemon
