// Reading a configuration file's settings (config.h): the table of every setting, the readers by
// topic, and the names of the configuration's enums.
#include "daemon/setup/config_read.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <string_view>

#include "common/cpu_list.h"
#include "common/json_reader.h"
#include "pinpoint/api.h"
#include "pinpoint/time_limit.h"
#include "pinpoint/units.h"
#include "sched/inventory.h"

namespace pinpoint::daemon {

using nlohmann::json;

namespace {

Status Bad(const std::string& key, const std::string& why) {
  return InvalidArgument("config: \"" + key + "\" " + why);
}

// A size given as a string ("4G") or a number of bytes.
Result<uint64_t> SizeValue(const json& v, const std::string& key) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_string()) {
    auto s = ParseSize(v.get<std::string>());
    if (!s.ok()) return Bad(key, s.status().message());
    return *s;
  }
  return Bad(key, "must be a size like \"4G\" or a number of bytes");
}

// The names of the configuration's enums: the only place they are spelled.
template <typename E>
struct Named {
  E value;
  const char* name;
};
constexpr Named<MpsMode> kMpsModes[] = {
    {MpsMode::kAuto, "auto"}, {MpsMode::kDaemons, "daemons"}, {MpsMode::kEnvOnly, "env-only"}};
constexpr Named<MpsFaultPolicy> kFaultPolicies[] = {{MpsFaultPolicy::kRequeue, "requeue"},
                                                    {MpsFaultPolicy::kFail, "fail"}};

template <typename E, size_t N>
std::optional<E> FromName(const Named<E> (&names)[N], const std::string& name) {
  for (const auto& n : names)
    if (name == n.name) return n.value;
  return std::nullopt;
}

template <typename E, size_t N>
const char* NameOf(const Named<E> (&names)[N], E value) {
  for (const auto& n : names)
    if (n.value == value) return n.name;
  return "?";
}

// A time limit as submit --time takes it ("2h", "1-00:00:00"); "0" is none.
Status TimeLimitValue(const json& j, const char* key, int64_t* out) {
  if (!j.contains(key)) return Status::Ok();
  const char* want = "must be a time limit like \"2h\" or \"1-00:00:00\" (\"0\": none)";
  if (!j[key].is_string()) return Bad(key, want);
  auto seconds = ParseTimeLimit(j[key].get<std::string>());
  if (!seconds.ok()) return Bad(key, seconds.status().message());
  *out = *seconds;
  return Status::Ok();
}

// One user_limits entry: its fields over `base`. Sizes need a unit; "unlimited" lifts a cap.
Result<sched::UserLimit> UserLimitValue(const json& v, const std::string& key,
                                        sched::UserLimit base) {
  if (!v.is_object())
    return Bad(key, "must be an object like {\"running_jobs\": 8, \"gpu_mem\": \"80GiB\"}");
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string field = key + "." + it.key();
    const json& value = it.value();
    bool unlimited = value.is_string() && value.get<std::string>() == "unlimited";
    if (it.key() == "running_jobs") {
      if (unlimited) {
        base.running_jobs.reset();
      } else if (value.is_number_integer() && value.get<int64_t>() >= 1 &&
                 value.get<int64_t>() <= 1'000'000) {
        base.running_jobs = static_cast<int>(value.get<int64_t>());
      } else {
        return Bad(field, "must be an integer 1..1000000 or \"unlimited\"");
      }
    } else if (it.key() == "gpu_mem") {
      if (unlimited) {
        base.gpu_mem_bytes.reset();
        continue;
      }
      if (!value.is_string())
        return Bad(field, "must be a size with a unit like \"80GiB\", or \"unlimited\"");
      auto bytes = ParseSize(value.get<std::string>());
      if (!bytes.ok()) return Bad(field, bytes.status().message());
      if (*bytes == 0) return Bad(field, "must be more than 0 (\"unlimited\" for no cap)");
      base.gpu_mem_bytes = *bytes;
    } else {
      return Bad(field, "is not a known limit (running_jobs, gpu_mem)");
    }
  }
  return base;
}

// "user_limits": {"default": {...}, "alice": {...}}: each user's entry over the default.
Status ReadUserLimits(const json& j, Config* c) {
  if (!j.contains("user_limits")) return Status::Ok();
  const json& limits = j["user_limits"];
  if (!limits.is_object())
    return Bad("user_limits", "must be an object of \"default\" and user names");
  if (limits.contains("default")) {
    auto d = UserLimitValue(limits["default"], "user_limits.default", {});
    if (!d.ok()) return d.status();
    c->default_user_limit = *d;
  }
  for (auto it = limits.begin(); it != limits.end(); ++it) {
    if (it.key() == "default") continue;
    const std::string& name = it.key();
    if (name.empty() || name.size() > 256 || name.find_first_of(" \t\n:@") != std::string::npos)
      return Bad("user_limits", "has '" + name + "', which is not a user name");
    auto entry = UserLimitValue(it.value(), "user_limits." + name, c->default_user_limit);
    if (!entry.ok()) return entry.status();
    c->user_limits[name] = *entry;
  }
  return Status::Ok();
}

// A list of names (class names, or user names and "@group"s) at `key`.
Status NameList(const json& v, const std::string& key, const char* want,
                std::vector<std::string>* out) {
  if (!v.is_array()) return Bad(key, want);
  for (const auto& n : v) {
    if (!n.is_string()) return Bad(key, want);
    std::string name = n.get<std::string>();
    if (name.empty() || name == "@" || name.size() > 256 ||
        name.find_first_of(" \t\n:") != std::string::npos)
      return Bad(key, std::string(want) + " (got '" + name + "')");
    out->push_back(name);
  }
  return Status::Ok();
}

// One qos entry: its name and its fields over a class's defaults.
Result<ServiceClass> ServiceClassValue(const std::string& name, const json& v) {
  const std::string key = "qos." + name;
  if (name.empty() || !ValidateQosName(name).ok())
    return Bad("qos", "has '" + name +
                          "', which is not a class name (letters, digits, '_', '-', "
                          "'.')");
  if (!v.is_object()) return Bad(key, "must be an object like {\"priority\": 10}");
  ServiceClass sc{.name = name};
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string field = key + "." + it.key();
    const json& value = it.value();
    auto integer = [&](int64_t lo, int64_t hi) -> Result<int64_t> {
      if (!value.is_number_integer() || value.get<int64_t>() < lo || value.get<int64_t>() > hi)
        return Bad(field, "must be an integer " + std::to_string(lo) + ".." + std::to_string(hi));
      return value.get<int64_t>();
    };
    if (it.key() == "priority") {
      auto p = integer(-kMaxQosPriority, kMaxQosPriority);
      if (!p.ok()) return p.status();
      sc.priority = static_cast<int>(*p);
    } else if (it.key() == "grace_s") {
      auto g = integer(0, kMaxQosGraceS);
      if (!g.ok()) return g.status();
      sc.grace_s = *g;
    } else if (it.key() == "mps_client_priority") {
      auto m = integer(0, 1);
      if (!m.ok()) return m.status();
      sc.mps_client_priority = static_cast<int>(*m);
    } else if (it.key() == "preempt_mode") {
      auto mode = value.is_string() ? PreemptModeFromName(value.get<std::string>()) : std::nullopt;
      if (!mode) return Bad(field, "must be off, requeue, suspend or cancel");
      sc.preempt_mode = *mode;
    } else if (it.key() == "preempts") {
      PP_RETURN_IF_ERROR(NameList(value, field, "must be a list of class names", &sc.preempts));
    } else if (it.key() == "users") {
      PP_RETURN_IF_ERROR(
          NameList(value, field, "must be a list of user names and @group names", &sc.users));
    } else {
      return Bad(field,
                 "is not a known field (priority, preempts, preempt_mode, grace_s, users, "
                 "mps_client_priority)");
    }
  }
  return sc;
}

}  // namespace

const char* MpsModeName(MpsMode mode) { return NameOf(kMpsModes, mode); }
const char* MpsFaultPolicyName(MpsFaultPolicy policy) { return NameOf(kFaultPolicies, policy); }

namespace {

Status CheckMode(const std::string& mode, const std::string& key) {
  if (!SharingModeFromName(mode))
    return Bad(key, "must be one of exclusive, timeslice, mps (got '" + mode + "')");
  return Status::Ok();
}

// Every setting a configuration file may have; any other key is refused.
constexpr std::string_view kSettings[] = {"state_dir",
                                          "socket_path",
                                          "backend",
                                          "default_mode",
                                          "gpu_modes",
                                          "mps_client_limit",
                                          "slice_placement",
                                          "keep_empty_gpus",
                                          "mps_affinity_ms",
                                          "mps_reclaim_s",
                                          "mig_min_idle_s",
                                          "mig_min_lifetime_s",
                                          "mig_drain_after_s",
                                          "mig_requests",
                                          "host_cpus",
                                          "system_cpus",
                                          "cpu_binding",
                                          "host_mem",
                                          "gpu_mem_reserve",
                                          "cancel_grace_ms",
                                          "daemon_away_limit_s",
                                          "poll_interval_ms",
                                          "cgroups",
                                          "cgroup_root",
                                          "shim_path",
                                          "mps",
                                          "mps_control",
                                          "mps_idle_quit_ms",
                                          "mps_fault_policy",
                                          "mps_fault_drain_after",
                                          "mps_dir",
                                          "mps_prestart_user",
                                          "watch_interval_ms",
                                          "gpu_mem_tolerance_pct",
                                          "gpu_mem_grace_ms",
                                          "usage_flush_ms",
                                          "settle_deadline_s",
                                          "metrics_listen",
                                          "max_connections",
                                          "max_connections_per_uid",
                                          "idle_timeout_ms",
                                          "max_reply_backlog",
                                          "max_user_priority",
                                          "priority_users",
                                          "allow_unenforced_slices",
                                          "env_deny",
                                          "retention_days",
                                          "lease_attach_timeout_ms",
                                          "cdi_dir",
                                          "default_time_limit",
                                          "max_time_limit",
                                          "user_limits",
                                          "max_array_tasks",
                                          "max_jobs",
                                          "max_jobs_per_user",
                                          "max_request_bytes",
                                          "max_user_request_bytes",
                                          "max_user_stored_bytes",
                                          "max_output_bytes",
                                          "max_user_output_bytes",
                                          "state_reserve_bytes",
                                          "qos",
                                          "default_qos",
                                          "gpu_types"};

// One configuration file's reading: its settings by topic, each read into `c` if present. The
// first error is kept (JsonReader), in Bad's form: config: "key" why.
class Settings {
 public:
  Settings(const json& j, Config* c) : j_(j), c_(c), in_(JsonReader::Message(j, "config: ")) {}

  Status Paths();
  Status Gpus();
  Status Mps();
  Status Host();
  Status Timing();
  Status Server();
  Status Users();
  Status Qos();

 private:
  Status Str(const char* key, std::string* out) {
    in_.NonEmptyString(key, out);
    return in_.error();
  }
  template <typename Int>
  Status Integer(const char* key, int64_t lo, int64_t hi, Int* out) {
    in_.Integer(key, out, lo, hi);
    return in_.error();
  }
  Status Flag(const char* key, bool* out) {
    in_.Bool(key, out);
    return in_.error();
  }
  // A size ("4G" or bytes) between lo and hi, with `range` saying so.
  Status Size(const char* key, uint64_t* out, uint64_t lo = 0, uint64_t hi = UINT64_MAX,
              const std::string& range = "") {
    if (!j_.contains(key)) return Status::Ok();
    Result<uint64_t> v = SizeValue(j_[key], key);
    if (!v.ok()) return v.status();
    if (*v < lo || *v > hi) return Bad(key, range);
    *out = *v;
    return Status::Ok();
  }
  // A per-user budget in bytes: 0 (`none`) or 1M..1T.
  Status UserBytes(const char* key, const char* none, uint64_t* out) {
    if (!j_.contains(key)) return Status::Ok();
    Result<uint64_t> v = SizeValue(j_[key], key);
    if (!v.ok()) return v.status();
    if (*v != 0 && (*v < (uint64_t{1} << 20) || *v > (uint64_t{1} << 40)))
      return Bad(key, std::string("must be 0 (") + none + ") or between 1M and 1T");
    *out = *v;
    return Status::Ok();
  }
  Status GpuModes();
  Status PriorityUsers();
  Status EnvDeny();

  const json& j_;
  Config* c_;
  JsonReader in_;
};

Status Settings::Paths() {
  PP_RETURN_IF_ERROR(Str("state_dir", &c_->state_dir));
  if (c_->state_dir[0] != '/') return Bad("state_dir", "must be an absolute path");
  PP_RETURN_IF_ERROR(Str("socket_path", &c_->socket_path));
  PP_RETURN_IF_ERROR(Str("backend", &c_->backend));
  PP_RETURN_IF_ERROR(Str("cgroup_root", &c_->cgroup_root));
  PP_RETURN_IF_ERROR(Str("shim_path", &c_->shim_path));
  PP_RETURN_IF_ERROR(Str("cdi_dir", &c_->cdi_dir));
  if (c_->cdi_dir[0] != '/') return Bad("cdi_dir", "must be an absolute path");
  if (j_.contains("metrics_listen")) {
    // Empty is allowed here: it turns the endpoint off.
    if (!j_["metrics_listen"].is_string())
      return Bad("metrics_listen", "must be \"HOST:PORT\" or \"\"");
    c_->metrics_listen = j_["metrics_listen"].get<std::string>();
  }
  return Status::Ok();
}

Status Settings::Gpus() {
  PP_RETURN_IF_ERROR(Str("default_mode", &c_->default_mode));
  PP_RETURN_IF_ERROR(CheckMode(c_->default_mode, "default_mode"));
  PP_RETURN_IF_ERROR(GpuModes());
  PP_RETURN_IF_ERROR(Integer("mig_min_idle_s", 0, 86'400, &c_->mig_min_idle_s));
  PP_RETURN_IF_ERROR(Integer("mig_drain_after_s", 0, 86'400, &c_->mig_drain_after_s));
  PP_RETURN_IF_ERROR(Integer("mig_min_lifetime_s", 0, 86'400, &c_->mig_min_lifetime_s));
  PP_RETURN_IF_ERROR(Flag("mig_requests", &c_->mig_requests));
  PP_RETURN_IF_ERROR(Str("slice_placement", &c_->slice_placement));
  if (!sched::SlicePlacementFromName(c_->slice_placement))
    return Bad("slice_placement",
               "must be one of spread, pack, auto (got '" + c_->slice_placement + "')");
  if (j_.contains("keep_empty_gpus") && j_["keep_empty_gpus"].is_string()) {
    if (j_["keep_empty_gpus"].get<std::string>() != "auto")
      return Bad("keep_empty_gpus", "must be \"auto\" or an integer 0..1024");
    c_->keep_empty_gpus = Config::kKeepEmptyAuto;
  } else {
    PP_RETURN_IF_ERROR(Integer("keep_empty_gpus", 0, 1024, &c_->keep_empty_gpus));
  }
  PP_RETURN_IF_ERROR(Size("gpu_mem_reserve", &c_->gpu_mem_reserve_bytes));
  PP_RETURN_IF_ERROR(Flag("allow_unenforced_slices", &c_->allow_unenforced_slices));
  PP_RETURN_IF_ERROR(Integer("watch_interval_ms", 100, 600'000, &c_->watch_interval_ms));
  PP_RETURN_IF_ERROR(Integer("gpu_mem_tolerance_pct", 0, 100, &c_->gpu_mem_tolerance_pct));
  PP_RETURN_IF_ERROR(Integer("gpu_mem_grace_ms", 0, 3'600'000, &c_->gpu_mem_grace_ms));
  return Status::Ok();
}

Status Settings::GpuModes() {
  if (!j_.contains("gpu_modes")) return Status::Ok();
  const json& m = j_["gpu_modes"];
  if (!m.is_object()) return Bad("gpu_modes", "must be an object of GPU -> mode");
  for (auto it = m.begin(); it != m.end(); ++it) {
    if (!it.value().is_string()) return Bad("gpu_modes." + it.key(), "must be a mode string");
    std::string mode = it.value().get<std::string>();
    if (mode == kMigDynamicMode) {
      c_->gpu_modes[it.key()] = GpuMode::MigDynamic();
      continue;
    }
    PP_RETURN_IF_ERROR(CheckMode(mode, "gpu_modes." + it.key()));
    c_->gpu_modes[it.key()] = GpuMode::Shared(*SharingModeFromName(mode));
  }
  return Status::Ok();
}

Status Settings::Mps() {
  PP_RETURN_IF_ERROR(Integer("mps_client_limit", 1, 128, &c_->mps_client_limit));
  std::string mps = NameOf(kMpsModes, c_->mps);
  PP_RETURN_IF_ERROR(Str("mps", &mps));
  auto mps_mode = FromName(kMpsModes, mps);
  if (!mps_mode) return Bad("mps", "must be auto, daemons or env-only (got '" + mps + "')");
  c_->mps = *mps_mode;
  PP_RETURN_IF_ERROR(Str("mps_control", &c_->mps_control));
  PP_RETURN_IF_ERROR(Str("mps_dir", &c_->mps_dir));
  PP_RETURN_IF_ERROR(Str("mps_prestart_user", &c_->mps_prestart_user));
  if (!c_->mps_dir.empty() && c_->mps_dir[0] != '/')
    return Bad("mps_dir", "must be an absolute path");
  PP_RETURN_IF_ERROR(Integer("mps_idle_quit_ms", 0, 86'400'000, &c_->mps_idle_quit_ms));
  PP_RETURN_IF_ERROR(Integer("mps_affinity_ms", 0, 600'000, &c_->mps_affinity_ms));
  PP_RETURN_IF_ERROR(Integer("mps_reclaim_s", 0, 604'800, &c_->mps_reclaim_s));
  std::string fault_policy = NameOf(kFaultPolicies, c_->mps_fault_policy);
  PP_RETURN_IF_ERROR(Str("mps_fault_policy", &fault_policy));
  auto policy = FromName(kFaultPolicies, fault_policy);
  if (!policy) return Bad("mps_fault_policy", "must be requeue or fail");
  c_->mps_fault_policy = *policy;
  return Integer("mps_fault_drain_after", 1, 1000, &c_->mps_fault_drain_after);
}

Status Settings::Host() {
  PP_RETURN_IF_ERROR(Integer("host_cpus", 0, 65536, &c_->host_cpus));
  std::string system_cpus = FormatCpuList(c_->system_cpus);
  in_.String("system_cpus", &system_cpus);
  PP_RETURN_IF_ERROR(in_.error());
  auto parsed = ParseCpuList(system_cpus);
  if (!parsed.ok()) return Bad("system_cpus", parsed.status().message());
  c_->system_cpus = std::move(*parsed);
  PP_RETURN_IF_ERROR(Str("cpu_binding", &c_->cpu_binding));
  if (c_->cpu_binding != "cpuset" && c_->cpu_binding != "quota")
    return Bad("cpu_binding", "must be cpuset or quota (got '" + c_->cpu_binding + "')");
  PP_RETURN_IF_ERROR(Size("host_mem", &c_->host_mem_bytes));
  return Flag("cgroups", &c_->cgroups);
}

Status Settings::Timing() {
  PP_RETURN_IF_ERROR(Integer("cancel_grace_ms", 0, 3'600'000, &c_->cancel_grace_ms));
  PP_RETURN_IF_ERROR(Integer("daemon_away_limit_s", 0, 2'678'400, &c_->daemon_away_limit_s));
  PP_RETURN_IF_ERROR(Integer("poll_interval_ms", 10, 60'000, &c_->poll_interval_ms));
  PP_RETURN_IF_ERROR(Integer("usage_flush_ms", 1000, 3'600'000, &c_->usage_flush_ms));
  PP_RETURN_IF_ERROR(Integer("settle_deadline_s", 0, 86'400, &c_->settle_deadline_s));
  PP_RETURN_IF_ERROR(Integer("retention_days", 0, 36'500, &c_->retention_days));
  return Integer("lease_attach_timeout_ms", 1000, 86'400'000, &c_->lease_attach_timeout_ms);
}

Status Settings::Server() {
  PP_RETURN_IF_ERROR(Integer("max_connections", 64, 65536, &c_->max_connections));
  PP_RETURN_IF_ERROR(Integer("max_connections_per_uid", 1, 65536, &c_->max_connections_per_uid));
  PP_RETURN_IF_ERROR(Integer("idle_timeout_ms", 0, 86'400'000, &c_->idle_timeout_ms));
  PP_RETURN_IF_ERROR(Size("max_reply_backlog", &c_->max_reply_backlog_bytes, 65536,
                          uint64_t{1} << 30, "must be between 64K and 1G"));
  PP_RETURN_IF_ERROR(Size("max_request_bytes", &c_->max_request_bytes, 4096, kMaxMessageBytes,
                          "must be between 4K and 1M"));
  PP_RETURN_IF_ERROR(Integer("max_array_tasks", 1, kMaxArrayTasks, &c_->max_array_tasks));
  PP_RETURN_IF_ERROR(Integer("max_jobs", 0, 10'000'000, &c_->max_jobs));
  PP_RETURN_IF_ERROR(Integer("max_jobs_per_user", 0, 10'000'000, &c_->max_jobs_per_user));
  PP_RETURN_IF_ERROR(UserBytes("max_user_request_bytes", "no limit", &c_->max_user_request_bytes));
  PP_RETURN_IF_ERROR(UserBytes("max_user_stored_bytes", "no bound", &c_->max_user_stored_bytes));
  PP_RETURN_IF_ERROR(UserBytes("max_output_bytes", "no bound", &c_->max_output_bytes));
  PP_RETURN_IF_ERROR(UserBytes("max_user_output_bytes", "no bound", &c_->max_user_output_bytes));
  return UserBytes("state_reserve_bytes", "none", &c_->state_reserve_bytes);
}

Status Settings::Users() {
  PP_RETURN_IF_ERROR(Integer("max_user_priority", -1000000, 1000000, &c_->max_user_priority));
  PP_RETURN_IF_ERROR(PriorityUsers());
  PP_RETURN_IF_ERROR(EnvDeny());
  PP_RETURN_IF_ERROR(TimeLimitValue(j_, "default_time_limit", &c_->default_time_limit_s));
  PP_RETURN_IF_ERROR(TimeLimitValue(j_, "max_time_limit", &c_->max_time_limit_s));
  if (c_->max_time_limit_s > 0 && c_->default_time_limit_s > c_->max_time_limit_s)
    return Bad("default_time_limit",
               "is above max_time_limit (" + FormatTimeLimit(c_->max_time_limit_s) + ")");
  return ReadUserLimits(j_, c_);
}

Status Settings::Qos() {
  if (j_.contains("qos")) {
    const json& table = j_["qos"];
    if (!table.is_object() || table.empty() || table.size() > kMaxServiceClasses)
      return Bad("qos", "must be an object of 1 to " + std::to_string(kMaxServiceClasses) +
                            " class names -> {priority, preempts, preempt_mode, grace_s, "
                            "users, mps_client_priority}");
    c_->qos.clear();
    for (auto it = table.begin(); it != table.end(); ++it) {
      auto one = ServiceClassValue(it.key(), it.value());
      if (!one.ok()) return one.status();
      c_->qos.push_back(*one);
    }
    for (const ServiceClass& sc : c_->qos) {
      for (const std::string& victim : sc.preempts) {
        if (!FindServiceClass(c_->qos, victim))
          return Bad("qos." + sc.name + ".preempts", "names '" + victim + "', no class of qos");
        if (victim == sc.name) return Bad("qos." + sc.name + ".preempts", "names its own class");
      }
    }
  }
  PP_RETURN_IF_ERROR(Str("default_qos", &c_->default_qos));
  if (!FindServiceClass(c_->qos, c_->default_qos))
    return Bad("default_qos", "must name a class of qos (got '" + c_->default_qos + "')");
  PP_RETURN_IF_ERROR(Str("gpu_types", &c_->gpu_types));
  if (c_->gpu_types != "any" && c_->gpu_types != "match")
    return Bad("gpu_types", "must be any or match (got '" + c_->gpu_types + "')");
  return Status::Ok();
}

Status Settings::PriorityUsers() {
  if (!j_.contains("priority_users")) return Status::Ok();
  const json& users = j_["priority_users"];
  const char* want = "must be a list of user names and @group names";
  if (!users.is_array()) return Bad("priority_users", want);
  for (const auto& u : users) {
    if (!u.is_string()) return Bad("priority_users", want);
    std::string name = u.get<std::string>();
    if (name.empty() || name == "@" || name.find_first_of(" \t\n:") != std::string::npos)
      return Bad("priority_users", std::string(want) + " (got '" + name + "')");
    c_->priority_users.push_back(name);
  }
  return Status::Ok();
}

Status Settings::EnvDeny() {
  if (!j_.contains("env_deny")) return Status::Ok();
  const json& patterns = j_["env_deny"];
  const char* want = "must be a list of variable name patterns (e.g. \"*TOKEN*\")";
  if (!patterns.is_array()) return Bad("env_deny", want);
  c_->env_deny.clear();
  for (const auto& p : patterns) {
    if (!p.is_string()) return Bad("env_deny", want);
    Status valid = ValidateEnvPattern(p.get<std::string>());
    if (!valid.ok()) return Bad("env_deny", valid.message());
    c_->env_deny.push_back(p.get<std::string>());
  }
  return Status::Ok();
}

}  // namespace

Status ApplyConfig(const json& j, Config* c) {
  if (!j.is_object()) return InvalidArgument("config: must be a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (std::find(std::begin(kSettings), std::end(kSettings), it.key()) == std::end(kSettings))
      return Bad(it.key(), "is not a known setting");
  }
  Settings settings(j, c);
  PP_RETURN_IF_ERROR(settings.Paths());
  PP_RETURN_IF_ERROR(settings.Gpus());
  PP_RETURN_IF_ERROR(settings.Mps());
  PP_RETURN_IF_ERROR(settings.Host());
  PP_RETURN_IF_ERROR(settings.Timing());
  PP_RETURN_IF_ERROR(settings.Server());
  PP_RETURN_IF_ERROR(settings.Users());
  return settings.Qos();
}

std::span<const std::string_view> ConfigSettings() { return kSettings; }

}  // namespace pinpoint::daemon
