#include "pinpoint/job.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>
#include <utility>

#include "common/enum_names.h"
#include "common/json_reader.h"
#include "pinpoint/escape.h"
#include "pinpoint/time_limit.h"

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

constexpr std::array<std::pair<SharingMode, const char*>, 3> kSharingModes = {{
    {SharingMode::kExclusive, "exclusive"},
    {SharingMode::kTimeslice, "timeslice"},
    {SharingMode::kMps, "mps"},
}};

constexpr std::array<std::pair<Hold, const char*>, 3> kHolds = {{
    {Hold::kNone, "none"},
    {Hold::kUser, "user"},
    {Hold::kRoot, "root"},
}};

constexpr std::pair<Reason, const char*> kReasons[] = {
    {Reason::kNone, ""},
    {Reason::kExitedZero, reason::kExitedZero},
    {Reason::kExitedNonZero, reason::kExitedNonZero},
    {Reason::kSignaled, reason::kSignaled},
    {Reason::kCancelled, reason::kCancelled},
    {Reason::kLaunchFailed, reason::kLaunchFailed},
    {Reason::kLost, reason::kLost},
    {Reason::kGpuFault, reason::kGpuFault},
    {Reason::kGpuMemExceeded, reason::kGpuMemExceeded},
    {Reason::kTimeLimit, reason::kTimeLimit},
    {Reason::kMpsUnresponsive, reason::kMpsUnresponsive},
    {Reason::kDependencyNeverSatisfied, reason::kDependencyNeverSatisfied},
    {Reason::kLeaseClosed, reason::kLeaseClosed},
    {Reason::kLeaseEmptied, reason::kLeaseEmptied},
    {Reason::kLeaseNotAttached, reason::kLeaseNotAttached},
    {Reason::kLeaseNotPlaced, reason::kLeaseNotPlaced},
    {Reason::kHeld, reason::kHeld},
    {Reason::kDependency, reason::kDependency},
    {Reason::kUserLimit, reason::kUserLimit},
    {Reason::kArrayLimit, reason::kArrayLimit},
    {Reason::kResources, reason::kResources},
    {Reason::kHostResources, reason::kHostResources},
    {Reason::kReservation, reason::kReservation},
    {Reason::kMpsUser, reason::kMpsUser},
    {Reason::kMpsFaultVictim, reason::kMpsFaultVictim},
    {Reason::kRequeued, reason::kRequeued},
    {Reason::kOutputExceeded, reason::kOutputExceeded},
    {Reason::kPreempted, reason::kPreempted},
};

constexpr std::array<std::pair<JobKind, const char*>, 2> kKinds = {{
    {JobKind::kJob, "job"},
    {JobKind::kLease, "lease"},
}};

}  // namespace

const char* HoldName(Hold hold) { return NameIn(kHolds, hold); }

std::optional<Hold> HoldFromName(const std::string& name) { return ValueIn(kHolds, name); }
const char* JobKindName(JobKind kind) { return NameIn(kKinds, kind); }
std::optional<JobKind> JobKindFromName(const std::string& name) { return ValueIn(kKinds, name); }

const char* JobStateName(JobState state) { return NameIn(kStates, state); }

const char* ReasonName(Reason reason) { return NameIn(kReasons, reason); }
std::optional<Reason> ReasonFromName(std::string_view name) { return ValueIn(kReasons, name); }

std::optional<JobState> JobStateFromName(const std::string& name) { return ValueIn(kStates, name); }

const char* SharingModeName(SharingMode mode) { return NameIn(kSharingModes, mode); }

std::optional<SharingMode> SharingModeFromName(const std::string& name) {
  return ValueIn(kSharingModes, name);
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
                           std::to_string(at) + " (" + field +
                           " must be one line of printable text)");
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

// An output pattern (-o/-e): a path without NUL, not ending in '/', whose % sequences are %j,
// %J, %u, %x, %A, %a, %N or %%.
Status CheckOutputPattern(const std::string& field, const std::string& pattern) {
  if (pattern.empty()) return Status::Ok();
  PP_RETURN_IF_ERROR(CheckNoNul(field, pattern, kMaxPathBytes));
  if (pattern.back() == '/') return InvalidArgument(field + " names a directory; give a file name");
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') continue;
    char next = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
    if (std::string_view("jJuxAaN%").find(next) == std::string_view::npos)
      return InvalidArgument(
          field + ": '%" + EscapeForTerminal(std::string(1, next)) +
          "' is not a placeholder (%j or %J job id, %u user, %x job name, %A array id, "
          "%a array task index, %N node name, %% a percent sign)");
    ++i;
  }
  return Status::Ok();
}

// Dependencies (after, afterok): a bounded number of job ids, each a possible id.
Status CheckDependencies(const JobRequest& r) {
  if (r.after.size() + r.afterok.size() > kMaxDependencies)
    return InvalidArgument(
        "too many dependencies: " + std::to_string(r.after.size() + r.afterok.size()) +
        " job ids, at most " + std::to_string(kMaxDependencies) + " in after and afterok together");
  for (const auto* list : {&r.after, &r.afterok}) {
    for (JobId id : *list) {
      if (id <= 0)
        return InvalidArgument(std::string(list == &r.after ? "after" : "afterok") + ": " +
                               std::to_string(id) +
                               " is not a job id (job ids are whole numbers from 1)");
    }
  }
  return Status::Ok();
}

// The Slurm task layout and where the job was submitted from (JobRequest::ntasks and after).
Status CheckTasks(const JobRequest& r) {
  if (r.ntasks < 1 || r.ntasks > kMaxTasks)
    return InvalidArgument("ntasks must be between 1 and " + std::to_string(kMaxTasks));
  if (r.gpus_per_task < 0 || r.gpus_per_task > 1024)
    return InvalidArgument("gpus_per_task must be between 0 and 1024");
  if (r.gpus_per_task > 0 && static_cast<int64_t>(r.gpus_per_task) * r.ntasks != r.gpus)
    return InvalidArgument("gpus_per_task x ntasks (" + std::to_string(r.gpus_per_task) + " x " +
                           std::to_string(r.ntasks) + ") must be the job's gpus (" +
                           std::to_string(r.gpus) + ")");
  PP_RETURN_IF_ERROR(CheckNoNul("submit_dir", r.submit_dir, kMaxPathBytes));
  if (!r.submit_dir.empty() && r.submit_dir[0] != '/')
    return InvalidArgument("submit_dir must be an absolute path");
  PP_RETURN_IF_ERROR(CheckDisplayText("submit_host", r.submit_host, kMaxNameBytes));
  return ValidateQosName(r.qos);
}

}  // namespace

std::string OutputPathFor(const std::string& pattern, JobId id, const std::string& user,
                          const std::string& name, const std::string& cwd, const ArrayTask& array,
                          const std::string& node) {
  std::string path;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 >= pattern.size()) {
      path += pattern[i];
      continue;
    }
    char next = pattern[++i];
    if (next == 'j' || next == 'J')
      path += std::to_string(id);  // %J: Slurm's job.step
    else if (next == 'N')
      path += node;
    else if (next == 'u')
      path += user;
    else if (next == 'x')
      path += name;
    else if (next == 'A')
      path += std::to_string(array.array_id != 0 ? array.array_id : id);
    else if (next == 'a')
      path += std::to_string(array.index);
    else
      path += next;
  }
  if (!path.empty() && path[0] != '/') path = cwd + (cwd.ends_with('/') ? "" : "/") + path;
  return path;
}

uint64_t RequestBytes(const JobRequest& r) {
  uint64_t bytes = r.cwd.size() + r.name.size() + r.as_user.size() + r.output_path.size() +
                   r.error_path.size() + r.submit_dir.size() + r.submit_host.size() + r.qos.size() +
                   r.gpu_type.size();
  for (const std::string& arg : r.argv) bytes += arg.size();
  for (const auto& [name, value] : r.env) bytes += name.size() + value.size();
  return bytes;
}

Status ValidateQosName(const std::string& qos) {
  bool plain =
      qos.size() <= kMaxQosBytes && std::all_of(qos.begin(), qos.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
      });
  if (!plain)
    return InvalidArgument(
        "qos must be a service class name (letters, digits, '_', '-', '.', "
        "at most " +
        std::to_string(kMaxQosBytes) + ")");
  return Status::Ok();
}

Status ValidateRequest(const JobRequest& r) {
  if (r.argv.empty() || r.argv[0].empty()) return InvalidArgument("request has no program to run");
  if (r.argv.size() > kMaxArgs)
    return InvalidArgument("too many arguments (at most " + std::to_string(kMaxArgs) + ")");
  for (size_t i = 0; i < r.argv.size(); ++i)
    PP_RETURN_IF_ERROR(CheckNoNul("argv[" + std::to_string(i) + "]", r.argv[i], kMaxArgBytes));
  PP_RETURN_IF_ERROR(CheckNoNul("cwd", r.cwd, kMaxPathBytes));
  if (r.cwd.empty() || r.cwd[0] != '/')
    return InvalidArgument("working directory must be an absolute path");
  if (r.gpus < 0 || r.gpus > 1024) return InvalidArgument("gpus must be between 0 and 1024");
  if (r.gpu_mem_bytes > 0 && r.gpus == 0)
    return InvalidArgument("--gpu-mem asks for a slice of a GPU: it needs --gpus 1 or more, not 0");
  if (r.gpu_share_pct < 0 || r.gpu_share_pct > 100)
    return InvalidArgument("gpu share must be between 1 and 100 percent");
  if (r.gpu_share_pct > 0 && r.gpu_mem_bytes == 0 && r.mig_profile.empty())
    return InvalidArgument(
        "a gpu share needs a slice: give --gpu-mem too (whole GPUs have no share)");
  if (!r.mig_profile.empty()) {
    bool plain = r.mig_profile.size() <= kMaxMigProfileBytes &&
                 std::all_of(r.mig_profile.begin(), r.mig_profile.end(), [](char c) {
                   return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+';
                 });
    if (!plain)
      return InvalidArgument(
          "MIG profile '" + EscapeForTerminal(r.mig_profile.substr(0, kMaxMigProfileBytes)) +
          "' is not a profile name (letters, digits, '.' and '+', e.g. 1g.10gb)");
    if (r.gpus != 1 || !r.devices.empty())
      return InvalidArgument(
          "a MIG profile is one GPU: --mig takes no --gpus other than 1 and no --device");
  }
  if (!r.gpu_type.empty()) {
    bool plain =
        r.gpu_type.size() <= kMaxGpuTypeBytes &&
        std::all_of(r.gpu_type.begin(), r.gpu_type.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
        });
    if (!plain)
      return InvalidArgument(
          "GPU type '" + EscapeForTerminal(r.gpu_type.substr(0, kMaxGpuTypeBytes)) +
          "' is not a model name (letters, digits, '_', '-' and '.', e.g. a100)");
    if (r.gpus == 0) return InvalidArgument("a GPU type needs --gpus of at least 1");
  }
  if (r.cpus < 1 || r.cpus > 65536) return InvalidArgument("cpus must be between 1 and 65536");
  if (r.priority < -1000000 || r.priority > 1000000)
    return InvalidArgument("priority must be between -1000000 and 1000000");
  PP_RETURN_IF_ERROR(CheckDisplayText("name", r.name, kMaxNameBytes));
  PP_RETURN_IF_ERROR(CheckDisplayText("as_user", r.as_user, kMaxNameBytes));
  // Named as people give them (submit -o, -e), the API's field after.
  PP_RETURN_IF_ERROR(CheckOutputPattern("-o (output_path)", r.output_path));
  PP_RETURN_IF_ERROR(CheckOutputPattern("-e (error_path)", r.error_path));
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
  if (r.time_limit_s < 0 || r.time_limit_s > kMaxTimeLimitS)
    return InvalidArgument("time limit must be between 0 (none) and " +
                           std::to_string(kMaxTimeLimitS) + " seconds");
  PP_RETURN_IF_ERROR(CheckDependencies(r));
  if (r.signal < 0 || r.signal > kMaxSignal)
    return InvalidArgument("signal must be between 1 and " + std::to_string(kMaxSignal) +
                           " (0: none)");
  if (r.signal_before_s < 0 || r.signal_before_s > kMaxSignalBeforeS)
    return InvalidArgument("signal_before_s must be between 0 and " +
                           std::to_string(kMaxSignalBeforeS) + " seconds");
  if (r.signal == 0 && (r.signal_before_s != 0 || r.signal_leader_only))
    return InvalidArgument("signal_before_s and signal_leader_only need a signal");
  PP_RETURN_IF_ERROR(CheckTasks(r));
  if (r.umask < -1 || r.umask > 0777) return InvalidArgument("umask must be between 0 and 0777");
  if (r.env.size() > kMaxEnvEntries)
    return InvalidArgument("too many environment variables (at most " +
                           std::to_string(kMaxEnvEntries) + ")");
  for (const auto& [k, v] : r.env) {
    if (!IsEnvName(k))
      return InvalidArgument("env: variable name '" + EscapeForTerminal(k) + "' is invalid (1 to " +
                             std::to_string(kMaxEnvNameBytes) +
                             " printable ASCII characters, no '=' or space)");
    PP_RETURN_IF_ERROR(CheckNoNul("env[" + k + "]", v, kMaxArgBytes));
  }
  return Status::Ok();
}

json ToJson(const JobRequest& r) {
  json j{{"name", r.name},
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
  // Written only when set: requests without them read as they always have.
  if (!r.output_path.empty()) j["output_path"] = r.output_path;
  if (!r.error_path.empty()) j["error_path"] = r.error_path;
  if (r.time_limit_s != 0) j["time_limit_s"] = r.time_limit_s;
  if (!r.after.empty()) j["after"] = r.after;
  if (!r.afterok.empty()) j["afterok"] = r.afterok;
  if (r.umask >= 0) j["umask"] = r.umask;
  if (r.signal != 0) j["signal"] = r.signal;
  if (r.signal_before_s != 0) j["signal_before_s"] = r.signal_before_s;
  if (r.signal_leader_only) j["signal_leader_only"] = true;
  if (r.requeue) j["requeue"] = true;
  if (!r.mig_profile.empty()) j["mig_profile"] = r.mig_profile;
  if (!r.gpu_type.empty()) j["gpu_type"] = r.gpu_type;
  if (r.ntasks != 1) j["ntasks"] = r.ntasks;
  if (r.gpus_per_task != 0) j["gpus_per_task"] = r.gpus_per_task;
  if (!r.submit_dir.empty()) j["submit_dir"] = r.submit_dir;
  if (!r.submit_host.empty()) j["submit_host"] = r.submit_host;
  if (!r.qos.empty()) j["qos"] = r.qos;
  return j;
}

Result<JobRequest> RequestFromJson(const json& j) {
  JobRequest r;
  auto in = JsonReader::Record(j, "request");
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
  in.String("output_path", &r.output_path);
  in.String("error_path", &r.error_path);
  in.Integer("time_limit_s", &r.time_limit_s);
  in.IntegerList("after", &r.after);
  in.IntegerList("afterok", &r.afterok);
  in.Integer("umask", &r.umask);
  in.Integer("signal", &r.signal);
  in.Integer("signal_before_s", &r.signal_before_s);
  in.Bool("signal_leader_only", &r.signal_leader_only);
  in.Bool("requeue", &r.requeue);
  in.String("mig_profile", &r.mig_profile);
  in.String("gpu_type", &r.gpu_type);
  in.Integer("ntasks", &r.ntasks);
  in.Integer("gpus_per_task", &r.gpus_per_task);
  in.String("submit_dir", &r.submit_dir);
  in.String("submit_host", &r.submit_host);
  in.String("qos", &r.qos);
  if (!in.error().ok()) return in.error();
  return r;
}

json ToJson(const Allocation& a) {
  return json{{"device_index", a.device_index},
              {"uuid", a.uuid},
              {"gpu_mem_bytes", a.gpu_mem_bytes},
              {"gpu_share_pct", a.gpu_share_pct},
              {"mode", SharingModeName(a.mode)}};
}

Result<Allocation> AllocationFromJson(const json& j) {
  Allocation a;
  auto in = JsonReader::Record(j, "allocation");
  in.Integer("device_index", &a.device_index);
  in.String("uuid", &a.uuid);
  in.Integer("gpu_mem_bytes", &a.gpu_mem_bytes);
  in.Integer("gpu_share_pct", &a.gpu_share_pct);
  in.Name("mode", &a.mode, SharingModeFromName, "allocation mode");
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

json ToJson(const ArrayTask& a) {
  json j{{"id", a.array_id},         {"index", a.index},         {"count", a.count},
         {"min_index", a.min_index}, {"max_index", a.max_index}, {"limit", a.limit}};
  // An array's rest: the tasks it stands for (its `indices` stay inside the daemon).
  if (!a.pending.empty()) j["pending"] = a.pending;
  return j;
}

Result<ArrayTask> ArrayTaskFromJson(const json& j) {
  ArrayTask a;
  auto in = JsonReader::Record(j, "array");
  in.Integer("id", &a.array_id);
  in.Integer("index", &a.index);
  in.Integer("count", &a.count);
  in.Integer("min_index", &a.min_index);
  in.Integer("max_index", &a.max_index);
  in.Integer("limit", &a.limit);
  if (in.Has("pending")) in.String("pending", &a.pending);
  if (!in.error().ok()) return in.error();
  return a;
}

Result<JobUsage> UsageFromJson(const json& j) {
  JobUsage u;
  auto in = JsonReader::Record(j, "usage");
  in.Integer("samples", &u.samples);
  in.Integer("gpu_mem_now_bytes", &u.gpu_mem_now_bytes);
  in.Integer("gpu_mem_peak_bytes", &u.gpu_mem_peak_bytes);
  in.Integer("energy_mj", &u.energy_mj);
  in.Integer("util_pct_mean", &u.util_pct_mean);
  in.Bool("final", &u.final);
  if (!in.error().ok()) return in.error();
  return u;
}

namespace {

// Lower-case words of `text`, split at anything but letters and digits.
std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  for (char c : text + " ") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      out.push_back(std::move(word));
      word.clear();
    }
  }
  return out;
}

}  // namespace

bool GpuModelMatches(const std::string& type, const std::string& model) {
  std::vector<std::string> wanted = Words(type);
  if (wanted.empty()) return false;
  std::vector<std::string> have = Words(model);
  return std::all_of(wanted.begin(), wanted.end(), [&](const std::string& w) {
    return std::any_of(have.begin(), have.end(), [&](const std::string& h) {
      // A word's beginning, ending where a number would go on: "80g" is
      // "80gb", "v100" is not "v1000".
      return h.rfind(w, 0) == 0 &&
             std::all_of(h.begin() + static_cast<std::ptrdiff_t>(w.size()), h.end(),
                         [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
    });
  });
}

}  // namespace pinpoint
