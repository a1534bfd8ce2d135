#include "pinpoint/job.h"

#include <algorithm>
#include <array>
#include <limits>
#include <utility>

#include "common/enum_names.h"
#include "pinpoint/escape.h"

namespace pinpoint {

using nlohmann::json;

namespace {

constexpr std::array<std::pair<JobState, const char*>, 5> kStates = {{
    {JobState::kPending, "pending"},
    {JobState::kRunning, "running"},
    {JobState::kCompleted, "completed"},
    {JobState::kFailed, "failed"},
    {JobState::kCancelled, "cancelled"},
}};

constexpr std::array<std::pair<AllocationMode, const char*>, 3> kAllocationModes = {{
    {AllocationMode::kExclusive, "exclusive"},
    {AllocationMode::kTimeslice, "timeslice"},
    {AllocationMode::kMps, "mps"},
}};

// Typed reads from untrusted JSON: a missing key keeps the default, a wrong type is an error.
class Reader {
 public:
  Reader(const json& j, std::string what) : j_(j), what_(std::move(what)) {
    if (!j_.is_object()) error_ = InvalidArgument(what_ + " must be a JSON object");
  }
  template <typename Int>
  void Integer(const char* key, Int* out) {
    if (!Has(key)) return;
    const json& v = j_.at(key);
    if (v.is_number_unsigned()) {
      uint64_t u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<Int>::max())) return Fail(key, "out of range");
      *out = static_cast<Int>(u);
    } else if (v.is_number_integer()) {
      int64_t s = v.get<int64_t>();
      if (s < static_cast<int64_t>(std::numeric_limits<Int>::min()) ||
          (s > 0 && static_cast<uint64_t>(s) > static_cast<uint64_t>(std::numeric_limits<Int>::max())))
        return Fail(key, "out of range");
      *out = static_cast<Int>(s);
    } else {
      Fail(key, "must be an integer");
    }
  }
  void String(const char* key, std::string* out) {
    if (!Has(key)) return;
    if (!j_.at(key).is_string()) return Fail(key, "must be a string");
    *out = j_.at(key).get<std::string>();
  }
  void Bool(const char* key, bool* out) {
    if (!Has(key)) return;
    if (!j_.at(key).is_boolean()) return Fail(key, "must be true or false");
    *out = j_.at(key).get<bool>();
  }
  void StringList(const char* key, std::vector<std::string>* out) {
    if (!Has(key)) return;
    const json& v = j_.at(key);
    if (!v.is_array()) return Fail(key, "must be an array of strings");
    out->clear();
    for (const auto& e : v) {
      if (!e.is_string()) return Fail(key, "must be an array of strings");
      out->push_back(e.get<std::string>());
    }
  }
  void IntegerList(const char* key, std::vector<int>* out) {
    if (!Has(key)) return;
    const json& v = j_.at(key);
    if (!v.is_array()) return Fail(key, "must be an array of integers");
    out->clear();
    for (const auto& e : v) {
      if (!e.is_number_integer() || e.get<int64_t>() < std::numeric_limits<int>::min() ||
          e.get<int64_t>() > std::numeric_limits<int>::max())
        return Fail(key, "must be an array of integers");
      out->push_back(e.get<int>());
    }
  }
  void StringMap(const char* key, std::map<std::string, std::string>* out) {
    if (!Has(key)) return;
    const json& v = j_.at(key);
    if (!v.is_object()) return Fail(key, "must be an object of strings");
    out->clear();
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!it.value().is_string()) return Fail(key, "must be an object of strings");
      (*out)[it.key()] = it.value().get<std::string>();
    }
  }
  bool Has(const char* key) const { return error_.ok() && j_.contains(key) && !j_.at(key).is_null(); }
  const json& At(const char* key) const { return j_.at(key); }
  void Fail(const char* key, const char* why) {
    if (error_.ok()) error_ = InvalidArgument(what_ + "." + key + " " + why);
  }
  void Fail(Status s) {
    if (error_.ok()) error_ = std::move(s);
  }
  const Status& error() const { return error_; }

 private:
  const json& j_;
  std::string what_;
  Status error_;
};

}  // namespace

const char* JobStateName(JobState state) { return NameIn(kStates, state); }

std::optional<JobState> JobStateFromName(const std::string& name) {
  return ValueIn(kStates, name);
}

const char* AllocationModeName(AllocationMode mode) { return NameIn(kAllocationModes, mode); }

std::optional<AllocationMode> AllocationModeFromName(const std::string& name) {
  return ValueIn(kAllocationModes, name);
}

namespace {

// Text of a request that is shown to people (its name, a user name): one line of printable
// UTF-8, so it can neither forge a row of a listing nor drive a terminal.
Status CheckDisplayText(const std::string& field, const std::string& text, size_t max_bytes) {
  if (text.size() > max_bytes)
    return InvalidArgument(field + " is longer than " + std::to_string(max_bytes) + " bytes");
  size_t at = FirstUnprintable(text);
  if (at != std::string::npos)
    return InvalidArgument(field + " holds a control character or invalid UTF-8 at byte " +
                           std::to_string(at) + " (" + field + " must be one line of printable text)");
  return Status::Ok();
}

// Text handed to the kernel (argv, cwd, environment values): any bytes but NUL, which would
// cut the string the job gets short of what pinpoint stored and shows.
Status CheckNoNul(const std::string& field, const std::string& text, size_t max_bytes) {
  if (text.size() > max_bytes)
    return InvalidArgument(field + " is longer than " + std::to_string(max_bytes) + " bytes");
  size_t at = text.find('\0');
  if (at != std::string::npos)
    return InvalidArgument(field + " holds a NUL byte at byte " + std::to_string(at));
  return Status::Ok();
}

// Environment names: printable ASCII without '=' (shells' [A-Za-z_][A-Za-z0-9_]* and exported
// bash functions' BASH_FUNC_name%% both fit).
bool IsEnvName(const std::string& key) {
  if (key.empty() || key.size() > kMaxEnvNameBytes) return false;
  for (char c : key) {
    if (c <= ' ' || c > '~' || c == '=') return false;
  }
  return true;
}

}  // namespace

Status ValidateRequest(const JobRequest& r) {
  if (r.argv.empty() || r.argv[0].empty()) return InvalidArgument("request has no program to run");
  if (r.argv.size() > kMaxArgs)
    return InvalidArgument("too many arguments (at most " + std::to_string(kMaxArgs) + ")");
  for (size_t i = 0; i < r.argv.size(); ++i)
    PP_RETURN_IF_ERROR(CheckNoNul("argv[" + std::to_string(i) + "]", r.argv[i], kMaxArgBytes));
  PP_RETURN_IF_ERROR(CheckNoNul("cwd", r.cwd, kMaxPathBytes));
  if (r.cwd.empty() || r.cwd[0] != '/') return InvalidArgument("working directory must be an absolute path");
  if (r.gpus < 0 || r.gpus > 1024) return InvalidArgument("gpus must be between 0 and 1024");
  if (r.gpu_mem_bytes > 0 && r.gpus == 0)
    return InvalidArgument("gpu memory was requested with gpus=0");
  if (r.gpu_share_pct < 0 || r.gpu_share_pct > 100)
    return InvalidArgument("gpu share must be between 1 and 100 percent");
  if (r.gpu_share_pct > 0 && r.gpu_mem_bytes == 0)
    return InvalidArgument("a gpu share needs a slice: give --gpu-mem too (whole GPUs have no share)");
  if (r.cpus < 1 || r.cpus > 65536) return InvalidArgument("cpus must be between 1 and 65536");
  if (r.priority < -1000000 || r.priority > 1000000)
    return InvalidArgument("priority must be between -1000000 and 1000000");
  PP_RETURN_IF_ERROR(CheckDisplayText("name", r.name, kMaxNameBytes));
  PP_RETURN_IF_ERROR(CheckDisplayText("as_user", r.as_user, kMaxNameBytes));
  if (!r.devices.empty()) {
    if (static_cast<int>(r.devices.size()) != r.gpus)
      return InvalidArgument("devices must name one device per GPU (" + std::to_string(r.gpus) +
                             " GPUs, " + std::to_string(r.devices.size()) + " devices)");
    std::vector<int> sorted = r.devices;
    std::sort(sorted.begin(), sorted.end());
    if (sorted.front() < 0) return InvalidArgument("device indices must not be negative");
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      return InvalidArgument("devices must be distinct");
  }
  if (r.env.size() > kMaxEnvEntries)
    return InvalidArgument("too many environment variables (at most " +
                           std::to_string(kMaxEnvEntries) + ")");
  for (const auto& [k, v] : r.env) {
    if (!IsEnvName(k))
      return InvalidArgument("env: variable name '" + EscapeForTerminal(k) +
                             "' is invalid (1 to " + std::to_string(kMaxEnvNameBytes) +
                             " printable ASCII characters, no '=' or space)");
    PP_RETURN_IF_ERROR(CheckNoNul("env[" + k + "]", v, kMaxArgBytes));
  }
  return Status::Ok();
}

json ToJson(const JobRequest& r) {
  return json{{"name", r.name},
              {"argv", r.argv},
              {"cwd", r.cwd},
              {"env", r.env},
              {"gpus", r.gpus},
              {"gpu_mem_bytes", r.gpu_mem_bytes},
              {"gpu_share_pct", r.gpu_share_pct},
              {"cpus", r.cpus},
              {"mem_bytes", r.mem_bytes},
              {"priority", r.priority},
              {"as_user", r.as_user},
              {"devices", r.devices}};
}

Result<JobRequest> RequestFromJson(const json& j) {
  JobRequest r;
  Reader in(j, "request");
  in.String("name", &r.name);
  in.StringList("argv", &r.argv);
  in.String("cwd", &r.cwd);
  in.StringMap("env", &r.env);
  in.Integer("gpus", &r.gpus);
  in.Integer("gpu_mem_bytes", &r.gpu_mem_bytes);
  in.Integer("gpu_share_pct", &r.gpu_share_pct);
  in.Integer("cpus", &r.cpus);
  in.Integer("mem_bytes", &r.mem_bytes);
  in.Integer("priority", &r.priority);
  in.String("as_user", &r.as_user);
  in.IntegerList("devices", &r.devices);
  if (!in.error().ok()) return in.error();
  return r;
}

json ToJson(const Allocation& a) {
  return json{{"device_index", a.device_index},
              {"uuid", a.uuid},
              {"gpu_mem_bytes", a.gpu_mem_bytes},
              {"gpu_share_pct", a.gpu_share_pct},
              {"mode", AllocationModeName(a.mode)}};
}

Result<Allocation> AllocationFromJson(const json& j) {
  Allocation a;
  Reader in(j, "allocation");
  in.Integer("device_index", &a.device_index);
  in.String("uuid", &a.uuid);
  in.Integer("gpu_mem_bytes", &a.gpu_mem_bytes);
  in.Integer("gpu_share_pct", &a.gpu_share_pct);
  if (in.Has("mode")) {
    std::string mode;
    in.String("mode", &mode);
    auto parsed = AllocationModeFromName(mode);
    if (!parsed) in.Fail("mode", "is not a known allocation mode");
    else a.mode = *parsed;
  }
  if (!in.error().ok()) return in.error();
  return a;
}

json ToJson(const JobUsage& u) {
  return json{{"samples", u.samples},
              {"gpu_mem_now_bytes", u.gpu_mem_now_bytes},
              {"gpu_mem_peak_bytes", u.gpu_mem_peak_bytes},
              {"energy_mj", u.energy_mj},
              {"util_pct_mean", u.util_pct_mean},
              {"final", u.final}};
}

Result<JobUsage> UsageFromJson(const json& j) {
  JobUsage u;
  Reader in(j, "usage");
  in.Integer("samples", &u.samples);
  in.Integer("gpu_mem_now_bytes", &u.gpu_mem_now_bytes);
  in.Integer("gpu_mem_peak_bytes", &u.gpu_mem_peak_bytes);
  in.Integer("energy_mj", &u.energy_mj);
  in.Integer("util_pct_mean", &u.util_pct_mean);
  in.Bool("final", &u.final);
  if (!in.error().ok()) return in.error();
  return u;
}

json ToJson(const JobRecord& r) {
  json allocations = json::array();
  for (const auto& a : r.allocations) allocations.push_back(ToJson(a));
  json j{{"id", r.id},
         {"request", ToJson(r.request)},
         {"uid", r.uid},
         {"gid", r.gid},
         {"user", r.user},
         {"state", JobStateName(r.state)},
         {"reason", r.reason},
         {"detail", r.detail},
         {"submit_ms", r.submit_ms},
         {"start_ms", r.start_ms},
         {"end_ms", r.end_ms},
         {"exit_code", r.exit_code ? json(*r.exit_code) : json(nullptr)},
         {"term_signal", r.term_signal ? json(*r.term_signal) : json(nullptr)},
         {"allocations", allocations},
         {"pid", r.pid},
         {"pid_start_ticks", r.pid_start_ticks},
         {"cancel_requested", r.cancel_requested},
         {"cancelled_by", r.cancelled_by},
         {"fault_suspect", r.fault_suspect},
         {"stop_reason", r.stop_reason},
         {"stop_detail", r.stop_detail},
         {"usage", ToJson(r.usage)}};
  return j;
}

Result<JobRecord> RecordFromJson(const json& j) {
  JobRecord r;
  Reader in(j, "job");
  in.Integer("id", &r.id);
  if (in.Has("request")) {
    auto req = RequestFromJson(in.At("request"));
    if (!req.ok()) in.Fail(req.status());
    else r.request = std::move(req).value();
  }
  in.Integer("uid", &r.uid);
  in.Integer("gid", &r.gid);
  in.String("user", &r.user);
  std::string state = "pending";
  in.String("state", &state);
  auto parsed = JobStateFromName(state);
  if (!parsed) in.Fail("state", "is not a known job state");
  else r.state = *parsed;
  in.String("reason", &r.reason);
  in.String("detail", &r.detail);
  in.Integer("submit_ms", &r.submit_ms);
  in.Integer("start_ms", &r.start_ms);
  in.Integer("end_ms", &r.end_ms);
  if (in.Has("exit_code")) {
    int code = 0;
    in.Integer("exit_code", &code);
    r.exit_code = code;
  }
  if (in.Has("term_signal")) {
    int sig = 0;
    in.Integer("term_signal", &sig);
    r.term_signal = sig;
  }
  if (in.Has("allocations")) {
    if (!in.At("allocations").is_array()) {
      in.Fail("allocations", "must be an array");
    } else {
      for (const auto& e : in.At("allocations")) {
        auto a = AllocationFromJson(e);
        if (!a.ok()) {
          in.Fail(a.status());
          break;
        }
        r.allocations.push_back(std::move(a).value());
      }
    }
  }
  in.Integer("pid", &r.pid);
  in.Integer("pid_start_ticks", &r.pid_start_ticks);
  in.Bool("cancel_requested", &r.cancel_requested);
  in.String("cancelled_by", &r.cancelled_by);
  in.Bool("fault_suspect", &r.fault_suspect);
  in.String("stop_reason", &r.stop_reason);
  in.String("stop_detail", &r.stop_detail);
  if (in.Has("usage")) {
    auto usage = UsageFromJson(in.At("usage"));
    if (!usage.ok()) in.Fail(usage.status());
    else r.usage = *usage;
  }
  if (!in.error().ok()) return in.error();
  return r;
}

}  // namespace pinpoint
