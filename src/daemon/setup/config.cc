#include "daemon/setup/config.h"

#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "common/file_util.h"
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
constexpr Named<MpsFaultPolicy> kFaultPolicies[] = {
    {MpsFaultPolicy::kRequeue, "requeue"}, {MpsFaultPolicy::kFail, "fail"}};

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

}  // namespace

std::string GpuMode::Name() const {
  return mig_dynamic ? std::string(kMigDynamicMode) : std::string(SharingModeName(sharing));
}

namespace {

Status CheckMode(const std::string& mode, const std::string& key) {
  if (!SharingModeFromName(mode))
    return Bad(key, "must be one of exclusive, timeslice, mps (got '" + mode + "')");
  return Status::Ok();
}

Status Apply(const json& j, Config* c) {
  static const std::set<std::string> kKeys = {"state_dir",
                                              "socket_path",
                                              "backend",
                                              "default_mode",
                                              "gpu_modes",
                                              "mps_client_limit",
                                              "slice_placement",
                                              "keep_empty_gpus",
                                              "mps_affinity_ms",
                                              "mig_min_idle_s",
                                              "mig_min_lifetime_s",
                                              "mig_drain_after_s",
                                              "mig_requests",
                                              "host_cpus",
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
                                              "state_reserve_bytes"};
  if (!j.is_object()) return InvalidArgument("config: must be a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!kKeys.count(it.key())) return Bad(it.key(), "is not a known setting");
  }
  // Errors read as Bad's: config: "key" why.
  auto in = JsonReader::Message(j, "config: ");
  auto str = [&](const char* key, std::string* out) -> Status {
    in.NonEmptyString(key, out);
    return in.error();
  };
  auto integer = [&](const char* key, int64_t lo, int64_t hi, auto* out) -> Status {
    in.Integer(key, out, lo, hi);
    return in.error();
  };
  PP_RETURN_IF_ERROR(str("state_dir", &c->state_dir));
  PP_RETURN_IF_ERROR(str("socket_path", &c->socket_path));
  PP_RETURN_IF_ERROR(str("backend", &c->backend));
  PP_RETURN_IF_ERROR(str("default_mode", &c->default_mode));
  PP_RETURN_IF_ERROR(CheckMode(c->default_mode, "default_mode"));
  PP_RETURN_IF_ERROR(str("cgroup_root", &c->cgroup_root));
  PP_RETURN_IF_ERROR(str("shim_path", &c->shim_path));
  PP_RETURN_IF_ERROR(integer("mps_client_limit", 1, 128, &c->mps_client_limit));
  PP_RETURN_IF_ERROR(integer("mig_min_idle_s", 0, 86'400, &c->mig_min_idle_s));
  PP_RETURN_IF_ERROR(integer("mig_drain_after_s", 0, 86'400, &c->mig_drain_after_s));
  PP_RETURN_IF_ERROR(integer("mig_min_lifetime_s", 0, 86'400, &c->mig_min_lifetime_s));
  PP_RETURN_IF_ERROR(str("slice_placement", &c->slice_placement));
  if (!sched::SlicePlacementFromName(c->slice_placement))
    return Bad("slice_placement",
               "must be one of spread, pack, auto (got '" + c->slice_placement + "')");
  if (j.contains("keep_empty_gpus") && j["keep_empty_gpus"].is_string()) {
    if (j["keep_empty_gpus"].get<std::string>() != "auto")
      return Bad("keep_empty_gpus", "must be \"auto\" or an integer 0..1024");
    c->keep_empty_gpus = Config::kKeepEmptyAuto;
  } else {
    PP_RETURN_IF_ERROR(integer("keep_empty_gpus", 0, 1024, &c->keep_empty_gpus));
  }
  std::string mps = NameOf(kMpsModes, c->mps);
  PP_RETURN_IF_ERROR(str("mps", &mps));
  auto mps_mode = FromName(kMpsModes, mps);
  if (!mps_mode) return Bad("mps", "must be auto, daemons or env-only (got '" + mps + "')");
  c->mps = *mps_mode;
  PP_RETURN_IF_ERROR(str("mps_control", &c->mps_control));
  PP_RETURN_IF_ERROR(str("mps_dir", &c->mps_dir));
  PP_RETURN_IF_ERROR(str("mps_prestart_user", &c->mps_prestart_user));
  if (!c->mps_dir.empty() && c->mps_dir[0] != '/')
    return Bad("mps_dir", "must be an absolute path");
  PP_RETURN_IF_ERROR(integer("mps_idle_quit_ms", 0, 86'400'000, &c->mps_idle_quit_ms));
  PP_RETURN_IF_ERROR(integer("mps_affinity_ms", 0, 600'000, &c->mps_affinity_ms));
  std::string fault_policy = NameOf(kFaultPolicies, c->mps_fault_policy);
  PP_RETURN_IF_ERROR(str("mps_fault_policy", &fault_policy));
  auto policy = FromName(kFaultPolicies, fault_policy);
  if (!policy) return Bad("mps_fault_policy", "must be requeue or fail");
  c->mps_fault_policy = *policy;
  PP_RETURN_IF_ERROR(integer("mps_fault_drain_after", 1, 1000, &c->mps_fault_drain_after));
  PP_RETURN_IF_ERROR(integer("host_cpus", 0, 65536, &c->host_cpus));
  PP_RETURN_IF_ERROR(str("cpu_binding", &c->cpu_binding));
  if (c->cpu_binding != "cpuset" && c->cpu_binding != "quota")
    return Bad("cpu_binding", "must be cpuset or quota (got '" + c->cpu_binding + "')");
  PP_RETURN_IF_ERROR(integer("cancel_grace_ms", 0, 3'600'000, &c->cancel_grace_ms));
  PP_RETURN_IF_ERROR(integer("daemon_away_limit_s", 0, 2'678'400, &c->daemon_away_limit_s));
  PP_RETURN_IF_ERROR(integer("poll_interval_ms", 10, 60'000, &c->poll_interval_ms));
  PP_RETURN_IF_ERROR(integer("watch_interval_ms", 100, 600'000, &c->watch_interval_ms));
  PP_RETURN_IF_ERROR(integer("gpu_mem_tolerance_pct", 0, 100, &c->gpu_mem_tolerance_pct));
  PP_RETURN_IF_ERROR(integer("gpu_mem_grace_ms", 0, 3'600'000, &c->gpu_mem_grace_ms));
  PP_RETURN_IF_ERROR(integer("usage_flush_ms", 1000, 3'600'000, &c->usage_flush_ms));
  PP_RETURN_IF_ERROR(integer("settle_deadline_s", 0, 86'400, &c->settle_deadline_s));
  PP_RETURN_IF_ERROR(integer("retention_days", 0, 36'500, &c->retention_days));
  PP_RETURN_IF_ERROR(
      integer("lease_attach_timeout_ms", 1000, 86'400'000, &c->lease_attach_timeout_ms));
  PP_RETURN_IF_ERROR(str("cdi_dir", &c->cdi_dir));
  if (c->cdi_dir[0] != '/') return Bad("cdi_dir", "must be an absolute path");
  if (j.contains("metrics_listen")) {
    // Empty is allowed here: it turns the endpoint off.
    if (!j["metrics_listen"].is_string())
      return Bad("metrics_listen", "must be \"HOST:PORT\" or \"\"");
    c->metrics_listen = j["metrics_listen"].get<std::string>();
  }
  if (j.contains("cgroups")) {
    if (!j["cgroups"].is_boolean()) return Bad("cgroups", "must be true or false");
    c->cgroups = j["cgroups"].get<bool>();
  }
  if (j.contains("mig_requests")) {
    if (!j["mig_requests"].is_boolean()) return Bad("mig_requests", "must be true or false");
    c->mig_requests = j["mig_requests"].get<bool>();
  }
  if (j.contains("allow_unenforced_slices")) {
    if (!j["allow_unenforced_slices"].is_boolean())
      return Bad("allow_unenforced_slices", "must be true or false");
    c->allow_unenforced_slices = j["allow_unenforced_slices"].get<bool>();
  }
  if (j.contains("host_mem")) {
    auto v = SizeValue(j["host_mem"], "host_mem");
    if (!v.ok()) return v.status();
    c->host_mem_bytes = *v;
  }
  if (j.contains("gpu_mem_reserve")) {
    auto v = SizeValue(j["gpu_mem_reserve"], "gpu_mem_reserve");
    if (!v.ok()) return v.status();
    c->gpu_mem_reserve_bytes = *v;
  }
  if (j.contains("gpu_modes")) {
    const json& m = j["gpu_modes"];
    if (!m.is_object()) return Bad("gpu_modes", "must be an object of GPU -> mode");
    for (auto it = m.begin(); it != m.end(); ++it) {
      if (!it.value().is_string()) return Bad("gpu_modes." + it.key(), "must be a mode string");
      std::string mode = it.value().get<std::string>();
      if (mode == kMigDynamicMode) {
        c->gpu_modes[it.key()] = GpuMode::MigDynamic();
        continue;
      }
      PP_RETURN_IF_ERROR(CheckMode(mode, "gpu_modes." + it.key()));
      c->gpu_modes[it.key()] = GpuMode::Shared(*SharingModeFromName(mode));
    }
  }
  PP_RETURN_IF_ERROR(integer("max_connections", 64, 65536, &c->max_connections));
  PP_RETURN_IF_ERROR(integer("max_connections_per_uid", 1, 65536, &c->max_connections_per_uid));
  PP_RETURN_IF_ERROR(integer("idle_timeout_ms", 0, 86'400'000, &c->idle_timeout_ms));
  if (j.contains("max_reply_backlog")) {
    auto v = SizeValue(j["max_reply_backlog"], "max_reply_backlog");
    if (!v.ok()) return v.status();
    if (*v < 65536 || *v > (uint64_t{1} << 30))
      return Bad("max_reply_backlog", "must be between 64K and 1G");
    c->max_reply_backlog_bytes = *v;
  }
  PP_RETURN_IF_ERROR(integer("max_user_priority", -1000000, 1000000, &c->max_user_priority));
  PP_RETURN_IF_ERROR(integer("max_array_tasks", 1, kMaxArrayTasks, &c->max_array_tasks));
  PP_RETURN_IF_ERROR(integer("max_jobs", 0, 10'000'000, &c->max_jobs));
  PP_RETURN_IF_ERROR(integer("max_jobs_per_user", 0, 10'000'000, &c->max_jobs_per_user));
  if (j.contains("max_request_bytes")) {
    auto v = SizeValue(j["max_request_bytes"], "max_request_bytes");
    if (!v.ok()) return v.status();
    if (*v < 4096 || *v > kMaxMessageBytes)
      return Bad("max_request_bytes", "must be between 4K and 1M");
    c->max_request_bytes = *v;
  }
  // A per-user budget in bytes: 0 (none) or 1M..1T.
  auto user_bytes = [&](const char* key, const char* none, uint64_t* out) -> Status {
    if (!j.contains(key)) return Status::Ok();
    auto v = SizeValue(j[key], key);
    if (!v.ok()) return v.status();
    if (*v != 0 && (*v < (uint64_t{1} << 20) || *v > (uint64_t{1} << 40)))
      return Bad(key, std::string("must be 0 (") + none + ") or between 1M and 1T");
    *out = *v;
    return Status::Ok();
  };
  PP_RETURN_IF_ERROR(user_bytes("max_user_request_bytes", "no limit", &c->max_user_request_bytes));
  PP_RETURN_IF_ERROR(user_bytes("max_user_stored_bytes", "no bound", &c->max_user_stored_bytes));
  PP_RETURN_IF_ERROR(user_bytes("max_output_bytes", "no bound", &c->max_output_bytes));
  PP_RETURN_IF_ERROR(user_bytes("state_reserve_bytes", "none", &c->state_reserve_bytes));
  if (j.contains("priority_users")) {
    const json& users = j["priority_users"];
    const char* want = "must be a list of user names and @group names";
    if (!users.is_array()) return Bad("priority_users", want);
    for (const auto& u : users) {
      if (!u.is_string()) return Bad("priority_users", want);
      std::string name = u.get<std::string>();
      if (name.empty() || name == "@" || name.find_first_of(" \t\n:") != std::string::npos)
        return Bad("priority_users", std::string(want) + " (got '" + name + "')");
      c->priority_users.push_back(name);
    }
  }
  if (j.contains("env_deny")) {
    const json& patterns = j["env_deny"];
    const char* want = "must be a list of variable name patterns (e.g. \"*TOKEN*\")";
    if (!patterns.is_array()) return Bad("env_deny", want);
    c->env_deny.clear();
    for (const auto& p : patterns) {
      if (!p.is_string()) return Bad("env_deny", want);
      Status valid = ValidateEnvPattern(p.get<std::string>());
      if (!valid.ok()) return Bad("env_deny", valid.message());
      c->env_deny.push_back(p.get<std::string>());
    }
  }
  PP_RETURN_IF_ERROR(TimeLimitValue(j, "default_time_limit", &c->default_time_limit_s));
  PP_RETURN_IF_ERROR(TimeLimitValue(j, "max_time_limit", &c->max_time_limit_s));
  if (c->max_time_limit_s > 0 && c->default_time_limit_s > c->max_time_limit_s)
    return Bad("default_time_limit",
               "is above max_time_limit (" + FormatTimeLimit(c->max_time_limit_s) + ")");
  PP_RETURN_IF_ERROR(ReadUserLimits(j, c));
  if (c->state_dir[0] != '/') return Bad("state_dir", "must be an absolute path");
  return Status::Ok();
}

}  // namespace

Result<Config> ParseConfig(const std::string& json_text) {
  json j = json::parse(json_text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (j.is_discarded()) return InvalidArgument("config: not valid JSON");
  Config c;
  Status s = Apply(j, &c);
  if (!s.ok()) return s;
  return c;
}

Result<Config> LoadConfig(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  auto c = ParseConfig(*text);
  if (!c.ok()) return Status(c.status().code(), path + ": " + c.status().message());
  return c;
}

std::string DefaultConfigJson() {
  Config c;
  json j{{"state_dir", c.state_dir},
         {"socket_path", c.socket_path},
         {"backend", c.backend},
         {"default_mode", c.default_mode},
         {"gpu_modes", json::object()},
         {"mps_client_limit", c.mps_client_limit},
         {"slice_placement", c.slice_placement},
         {"cpu_binding", c.cpu_binding},
         {"keep_empty_gpus",
          c.keep_empty_gpus == Config::kKeepEmptyAuto ? json("auto") : json(c.keep_empty_gpus)},
         {"mps_affinity_ms", c.mps_affinity_ms},
         {"host_cpus", c.host_cpus},
         {"host_mem", "0"},
         {"gpu_mem_reserve", "0"},
         {"cancel_grace_ms", c.cancel_grace_ms},
         {"daemon_away_limit_s", c.daemon_away_limit_s},
         {"poll_interval_ms", c.poll_interval_ms},
         {"cgroups", c.cgroups},
         {"cgroup_root", c.cgroup_root},
         {"mps", NameOf(kMpsModes, c.mps)},
         {"allow_unenforced_slices", c.allow_unenforced_slices},
         {"mig_requests", c.mig_requests},
         {"mig_min_idle_s", c.mig_min_idle_s},
         {"mig_drain_after_s", c.mig_drain_after_s},
         {"mig_min_lifetime_s", c.mig_min_lifetime_s},
         {"mps_control", c.mps_control},
         {"mps_idle_quit_ms", c.mps_idle_quit_ms},
         {"mps_fault_policy", NameOf(kFaultPolicies, c.mps_fault_policy)},
         {"mps_fault_drain_after", c.mps_fault_drain_after},
         {"watch_interval_ms", c.watch_interval_ms},
         {"gpu_mem_tolerance_pct", c.gpu_mem_tolerance_pct},
         {"gpu_mem_grace_ms", c.gpu_mem_grace_ms},
         {"usage_flush_ms", c.usage_flush_ms},
         {"settle_deadline_s", c.settle_deadline_s},
         {"retention_days", c.retention_days},
         {"lease_attach_timeout_ms", c.lease_attach_timeout_ms},
         {"cdi_dir", c.cdi_dir},
         {"metrics_listen", c.metrics_listen},
         {"max_connections", c.max_connections},
         {"max_connections_per_uid", c.max_connections_per_uid},
         {"idle_timeout_ms", c.idle_timeout_ms},
         {"max_reply_backlog", FormatSize(c.max_reply_backlog_bytes)},
         {"max_user_priority", c.max_user_priority},
         {"priority_users", c.priority_users},
         {"env_deny", c.env_deny},
         {"default_time_limit", "0"},
         {"max_time_limit", "0"},
         {"user_limits", json::object()},
         {"max_array_tasks", c.max_array_tasks},
         {"max_jobs", c.max_jobs},
         {"max_jobs_per_user", c.max_jobs_per_user},
         {"max_request_bytes", FormatSize(c.max_request_bytes)},
         {"max_user_request_bytes", FormatSize(c.max_user_request_bytes)},
         {"max_user_stored_bytes", FormatSize(c.max_user_stored_bytes)},
         {"max_output_bytes", FormatSize(c.max_output_bytes)},
         {"state_reserve_bytes", FormatSize(c.state_reserve_bytes)}};
  return j.dump(2);
}

}  // namespace pinpoint::daemon
