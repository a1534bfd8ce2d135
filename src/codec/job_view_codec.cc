// The job view's JSON form ("JobRecord" in docs/api.md): the job forms of job.h for the request,
// its allocations and usage, and how much of the environment is shown.
#include "common/json_reader.h"
#include "pinpoint/api_codec.h"

namespace pinpoint {

using nlohmann::json;

namespace {

json OptionalInt(const std::optional<int>& v) { return v ? json(*v) : json(nullptr); }

// How much of the environment a job's "request" carries: "env_hidden": true, no "env" at all
// (a listing), or the environment.
Result<EnvShown> EnvShownFromJson(const json& request) {
  bool hidden = false;
  auto in = JsonReader::Record(request, "request");
  in.Bool("env_hidden", &hidden);
  if (!in.ok()) return in.error();
  if (hidden) return EnvShown::kHidden;
  return in.Has("env") ? EnvShown::kFull : EnvShown::kOmitted;
}

json ToJson(const Enforcement& e) {
  return json{{"resource", e.resource},
              {"asked", e.asked},
              {"applied", e.applied},
              {"observed", e.observed},
              {"verdict", e.verdict}};
}

Result<Enforcement> EnforcementFromJson(const json& j) {
  Enforcement e;
  auto in = JsonReader::Record(j, "enforcement");
  in.String("resource", &e.resource);
  in.String("asked", &e.asked);
  in.String("applied", &e.applied);
  in.String("observed", &e.observed);
  in.String("verdict", &e.verdict);
  if (!in.ok()) return in.error();
  return e;
}

}  // namespace

json ToJson(const JobView& job) {
  json allocations = json::array();
  for (const auto& a : job.allocations) allocations.push_back(ToJson(a));
  json request = ToJson(job.request);
  if (job.env_shown == EnvShown::kHidden) {
    request["env"] = json::object();
    request["env_hidden"] = true;
  } else if (job.env_shown == EnvShown::kOmitted) {
    request.erase("env");
  }
  json j{{"id", job.id},
         {"request", std::move(request)},
         {"uid", job.uid},
         {"gid", job.gid},
         {"user", job.user},
         {"state", JobStateName(job.state)},
         {"reason", job.reason},
         {"detail", job.detail},
         {"submit_ms", job.submit_ms},
         {"start_ms", job.start_ms},
         {"end_ms", job.end_ms},
         {"exit_code", OptionalInt(job.exit_code)},
         {"term_signal", OptionalInt(job.term_signal)},
         {"allocations", std::move(allocations)},
         {"usage", ToJson(job.usage)},
         {"pid", job.pid},
         {"pid_start_ticks", job.pid_start_ticks},
         {"cancel_requested", job.cancel_requested},
         {"cancelled_by", job.cancelled_by},
         {"fault_suspect", job.fault_suspect},
         {"stop_reason", job.stop_reason},
         {"stop_detail", job.stop_detail}};
  if (job.hold != Hold::kNone) j["hold"] = HoldName(job.hold);
  // Only leases carry these: a job's JSON stays what it always was.
  if (job.kind != JobKind::kJob) j["kind"] = JobKindName(job.kind);
  if (!job.lease_cgroup.empty()) j["lease_cgroup"] = job.lease_cgroup;
  if (!job.cpuset.empty()) j["cpuset"] = job.cpuset;
  if (!job.suspend.empty()) j["suspend"] = {{"phase", job.suspend}, {"detail", job.suspend_detail}};
  if (job.suspended_ms != 0) j["suspended_ms"] = job.suspended_ms;
  if (job.array.array_id != 0) j["array"] = ToJson(job.array);  // only an array's tasks carry it
  if (!job.enforcement.empty()) {
    json list = json::array();
    for (const Enforcement& e : job.enforcement) list.push_back(ToJson(e));
    j["enforcement"] = std::move(list);
  }
  return j;
}

template <>
Result<JobView> FromJson<JobView>(const json& j) {
  JobView job;
  auto in = JsonReader::Record(j, "job");
  in.Integer("id", &job.id);
  in.Name("kind", &job.kind, JobKindFromName, "job kind");
  in.String("lease_cgroup", &job.lease_cgroup);
  in.IntegerList("cpuset", &job.cpuset);
  in.Integer("suspended_ms", &job.suspended_ms);
  if (j.is_object() && j.contains("suspend") && j["suspend"].is_object()) {
    auto suspend = JsonReader::Record(j["suspend"], "job.suspend");
    suspend.String("phase", &job.suspend);
    suspend.String("detail", &job.suspend_detail);
    if (!suspend.ok()) return suspend.error();
  }
  in.Object("request", &job.request, RequestFromJson);
  in.Object("request", &job.env_shown, EnvShownFromJson);
  in.Integer("uid", &job.uid);
  in.Integer("gid", &job.gid);
  in.String("user", &job.user);
  in.Name("state", &job.state, JobStateFromName, "job state");
  in.String("reason", &job.reason);
  in.String("detail", &job.detail);
  in.Integer("submit_ms", &job.submit_ms);
  in.Integer("start_ms", &job.start_ms);
  in.Integer("end_ms", &job.end_ms);
  in.OptionalInteger("exit_code", &job.exit_code);
  in.OptionalInteger("term_signal", &job.term_signal);
  in.ObjectList("allocations", &job.allocations, AllocationFromJson);
  in.Object("usage", &job.usage, UsageFromJson);
  in.Integer("pid", &job.pid);
  in.Integer("pid_start_ticks", &job.pid_start_ticks);
  in.Bool("cancel_requested", &job.cancel_requested);
  in.String("cancelled_by", &job.cancelled_by);
  in.Bool("fault_suspect", &job.fault_suspect);
  in.String("stop_reason", &job.stop_reason);
  in.String("stop_detail", &job.stop_detail);
  in.Name("hold", &job.hold, HoldFromName, "hold");
  in.Object("array", &job.array, ArrayTaskFromJson);
  in.ObjectList("enforcement", &job.enforcement, EnforcementFromJson);
  if (!in.ok()) return in.error();
  return job;
}

}  // namespace pinpoint
