#include "daemon/node/admission.h"

#include <algorithm>

#include "common/env_select.h"
#include "daemon/arrays/job_array.h"
#include "daemon/jobs/job_room.h"
#include "daemon/jobs/occupancy.h"
#include "daemon/jobs/priority.h"
#include "daemon/jobs/sched_view.h"
#include "pinpoint/escape.h"
#include "pinpoint/time_limit.h"
#include "sched/placement.h"

namespace pinpoint::daemon {

Result<std::vector<std::string>> Admission::Prepare(JobRequest& request) const {
  // Before anything compares or stores it: the store never holds what env_deny names.
  std::vector<std::string> dropped = DropDenied(request.env, options_->admission.env_deny);
  PP_RETURN_IF_ERROR(ValidateRequest(request));
  PP_RETURN_IF_ERROR(ApplyTimeLimit(request));
  if (request.qos.empty())
    request.qos = options_->admission.default_qos;  // a stored job names its class
  return dropped;
}

Result<std::vector<std::string>> Admission::PrepareArray(JobRequest& request,
                                                         const ArraySpec& spec) const {
  auto dropped = Prepare(request);
  if (!dropped.ok()) return dropped.status();
  if (spec.indices.empty()) return InvalidArgument("an array needs at least one task");
  PP_RETURN_IF_ERROR(CheckArraySize(spec, request, options_->admission.max_array_tasks));
  return dropped;
}

namespace {

Status CheckSignalHasLimit(const JobRequest& request) {
  if (request.signal != 0 && request.time_limit_s == 0)
    return InvalidArgument(
        "--signal is sent before the time limit, and this job has none: give --time too "
        "(this node sets no default_time_limit)");
  return Status::Ok();
}

// submit --mig and update --mig (docs/scheduling.md "Dynamic MIG"): refused where the site
// turned it off. Else the memory of a slice that names none of its own: the profile's whole
// memory, or none for a profile the node does not know (CheckFits says why).
Result<std::optional<uint64_t>> MigSliceMemory(const NodeOptions& o,
                                               const sched::Inventory& devices,
                                               const std::string& profile) {
  if (profile.empty()) return std::optional<uint64_t>();
  if (!o.admission.mig_requests)
    return FailedPrecondition(
        "this node takes no --mig (its mig_requests setting is off): ask for --gpu-mem instead");
  return devices.mig_profiles.Of(profile);
}

}  // namespace

Status Admission::ResolveTimeLimit(int64_t& seconds) const {
  const NodeOptions& o = *options_;
  if (seconds == 0)
    seconds = o.admission.default_time_limit_s > 0 ? o.admission.default_time_limit_s
                                                   : o.admission.max_time_limit_s;
  if (o.admission.max_time_limit_s > 0 && seconds > o.admission.max_time_limit_s)
    return FailedPrecondition("time limit " + FormatTimeLimit(seconds) + " is above " +
                              FormatTimeLimit(o.admission.max_time_limit_s) +
                              ", the most this node allows (max_time_limit)");
  return Status::Ok();
}

Status Admission::ApplyTimeLimit(JobRequest& request) const {
  PP_RETURN_IF_ERROR(ResolveTimeLimit(request.time_limit_s));
  return CheckSignalHasLimit(request);
}

Status Admission::PrepareEdit(JobEdit& edit) const {
  if (edit.time_limit_s) PP_RETURN_IF_ERROR(ResolveTimeLimit(*edit.time_limit_s));
  // update --mig: as submit's (CheckEdit says why a profile is unknown).
  if (edit.mig_profile) {
    auto mem = MigSliceMemory(*options_, *devices_, *edit.mig_profile);
    if (!mem.ok()) return mem.status();
    if (!edit.gpu_mem_bytes && *mem) edit.gpu_mem_bytes = **mem;
  }
  return Status::Ok();
}

Status Admission::CheckEdit(const api::Caller& caller, const JobRecord& before,
                            const JobRecord& after, const JobTable& jobs) const {
  const NodeOptions& o = *options_;
  const JobRequest& was = before.request;
  const JobRequest& now = after.request;
  // A lease's request has no command to check (ValidateLease's rules held at its opening), and
  // only its time limit changes (ApplyEdit).
  if (OccupancyOf(after.kind).editable) PP_RETURN_IF_ERROR(ValidateRequest(now));
  PP_RETURN_IF_ERROR(CheckSignalHasLimit(now));
  if (now.priority != was.priority)
    PP_RETURN_IF_ERROR(
        CheckPriority(o.admission.priority, caller, o.identity.daemon_uid, now.priority, *users_));
  if (now.qos != was.qos)
    PP_RETURN_IF_ERROR(CheckQos(o.admission.qos, caller, o.identity.daemon_uid, now.qos, *users_));
  if (now.gpu_mem_bytes != was.gpu_mem_bytes || now.gpu_share_pct != was.gpu_share_pct ||
      now.gpus != was.gpus || now.cpus != was.cpus || now.mem_bytes != was.mem_bytes ||
      now.mig_profile != was.mig_profile) {
    PP_RETURN_IF_ERROR(sched::CheckFits(DemandOf(after), *devices_));
    PP_RETURN_IF_ERROR(sched::CheckUserLimit(DemandOf(after), UserLimitOf(after.user), *devices_));
  }
  // A rest's request is held once per task it stands for, before and after.
  size_t tasks = TasksIn(after);
  uint64_t held = jobs.HeldBytesOf(after.uid);
  uint64_t own = RequestBytes(was) * tasks;
  return CheckRequestBytes(after, tasks, held > own ? held - own : 0, o.admission.max_request_bytes,
                           caller.IsRoot() ? 0 : o.admission.max_user_request_bytes);
}

Status Admission::CheckAsked(const JobRecord& r, const ScriptRights& rights) const {
  const NodeOptions& o = *options_;
  using F = ScriptField;
  PP_RETURN_IF_ERROR(rights.Explain(api::CheckSubmitAs(rights.For({F::kAsUser}), r.request.as_user),
                                    {F::kAsUser}));
  PP_RETURN_IF_ERROR(
      rights.Explain(CheckPriority(o.admission.priority, rights.For({F::kPriority}),
                                   o.identity.daemon_uid, r.request.priority, *users_),
                     {F::kPriority}));
  return rights.Explain(CheckQos(o.admission.qos, rights.For({F::kQos}), o.identity.daemon_uid,
                                 r.request.qos, *users_),
                        {F::kQos});
}

Status Admission::CheckRoom(const JobRecord& r, const ScriptRights& rights, const JobTable& jobs,
                            size_t count) const {
  const NodeOptions& o = *options_;
  using F = ScriptField;
  // A user's script sets the count (its --array) and some of the bytes: judged with the user's
  // caps, as the user's own submit would be.
  bool root = rights.For({F::kArray}).IsRoot();
  PP_RETURN_IF_ERROR(
      rights.Explain(CheckJobRoom(jobs.map(), jobs.tasks(), r, count, o.admission.max_jobs,
                                  root ? 0 : o.admission.max_jobs_per_user, root),
                     {F::kArray}));
  std::initializer_list<F> text = {F::kArray, F::kName, F::kOutput, F::kError, F::kEnv, F::kCwd};
  root = rights.For(text).IsRoot();
  return rights.Explain(
      CheckRequestBytes(r, count, jobs.HeldBytesOf(r.uid), o.admission.max_request_bytes,
                        root ? 0 : o.admission.max_user_request_bytes),
      text);
}

Result<JobRecord> Admission::Admit(const api::Caller& caller, JobRequest request,
                                   const JobTable& jobs, size_t count,
                                   const ScriptOrigins& from_script) const {
  const NodeOptions& o = *options_;
  auto mig_mem = MigSliceMemory(o, *devices_, request.mig_profile);
  if (!mig_mem.ok()) return mig_mem.status();
  if (request.gpu_mem_bytes == 0 && *mig_mem) request.gpu_mem_bytes = **mig_mem;
  PP_RETURN_IF_ERROR(api::CheckSubmitAs(caller, request.as_user));
  auto user = request.as_user.empty() ? users_->ByUid(caller.uid) : users_->ByName(request.as_user);
  if (!user.ok()) {
    if (!request.as_user.empty()) return InvalidArgument(user.status().message());
    user = UserInfo{caller.uid, caller.gid, "uid " + std::to_string(caller.uid), {caller.gid}};
  }
  if (o.identity.daemon_uid != 0 && user->uid != o.identity.daemon_uid) {
    return PermissionDenied("pinpointd runs as uid " + std::to_string(o.identity.daemon_uid) +
                            " and cannot start jobs as " + user->name + "; run it as root");
  }
  JobRecord r;
  r.uid = user->uid;
  r.gid = user->gid;
  r.user = user->name;
  r.request = std::move(request);
  // A class only a script names that this node has not (a site's QOS from another cluster): the
  // job runs in the default class, as under any directive pinpoint does not honour; a class typed
  // on the command line is refused (CheckQos).
  if (from_script.count(ScriptField::kQos) > 0 &&
      FindServiceClass(o.admission.qos, r.request.qos) == nullptr)
    r.request.qos.clear();
  if (r.request.qos.empty())
    r.request.qos = o.admission.default_qos;  // a stored job names its class
  ScriptRights rights(caller, r.uid, r.gid, r.user, from_script);
  PP_RETURN_IF_ERROR(CheckAsked(r, rights));
  PP_RETURN_IF_ERROR(CheckGpuType(r.request.gpu_type));
  PP_RETURN_IF_ERROR(sched::CheckFits(DemandOf(r), *devices_));
  PP_RETURN_IF_ERROR(sched::CheckUserLimit(DemandOf(r), UserLimitOf(r.user), *devices_));
  PP_RETURN_IF_ERROR(CheckRoom(r, rights, jobs, count));
  return r;
}

// Where the site asks (gpu_types "match"), a Slurm GPU type names a model the node has (any of its
// GPUs then), else the submit is refused, naming the models there are: a script written for a
// cluster's A100s is not run on an H100 node unnoticed. Else ("any") any GPU of the node takes it.
Status Admission::CheckGpuType(const std::string& type) const {
  if (type.empty() || !options_->admission.gpu_types_match) return Status::Ok();
  std::vector<std::string> models;
  for (const sched::Device& d : devices_->devices) {
    if (GpuModelMatches(type, d.name)) return Status::Ok();
    if (std::find(models.begin(), models.end(), d.name) == models.end()) models.push_back(d.name);
  }
  std::string names;
  for (const std::string& m : models) names += (names.empty() ? "" : ", ") + EscapeForTerminal(m);
  return InvalidArgument("GPU type '" + EscapeForTerminal(type) + "': this node has no such GPU (" +
                         (names.empty() ? "it has no GPU" : "its GPUs: " + names) + ")");
}

const sched::UserLimit& Admission::UserLimitOf(const std::string& name) const {
  auto it = options_->pass.user_limits.find(name);
  return it == options_->pass.user_limits.end() ? options_->pass.default_user_limit : it->second;
}

}  // namespace pinpoint::daemon
