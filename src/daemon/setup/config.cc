#include "daemon/setup/config.h"

#include <nlohmann/json.hpp>

#include "common/cpu_list.h"
#include "common/file_util.h"
#include "daemon/setup/config_read.h"
#include "pinpoint/units.h"

namespace pinpoint::daemon {

using nlohmann::json;

std::string GpuMode::Name() const {
  return mig_dynamic ? std::string(kMigDynamicMode) : std::string(SharingModeName(sharing));
}

Result<Config> ParseConfig(const std::string& json_text) {
  json j = json::parse(json_text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (j.is_discarded()) return InvalidArgument("config: not valid JSON");
  Config c;
  Status s = ApplyConfig(j, &c);
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

namespace {

// The qos table as a configuration file writes it.
json QosJson(const std::vector<ServiceClass>& classes) {
  json table = json::object();
  for (const ServiceClass& c : classes)
    table[c.name] = json{{"priority", c.priority},
                         {"preempts", c.preempts},
                         {"preempt_mode", PreemptModeName(c.preempt_mode)},
                         {"grace_s", c.grace_s},
                         {"users", c.users},
                         {"mps_client_priority", c.mps_client_priority}};
  return table;
}

}  // namespace

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
         {"mps_reclaim_s", c.mps_reclaim_s},
         {"host_cpus", c.host_cpus},
         {"system_cpus", FormatCpuList(c.system_cpus)},
         {"host_mem", "0"},
         {"gpu_mem_reserve", "0"},
         {"cancel_grace_ms", c.cancel_grace_ms},
         {"daemon_away_limit_s", c.daemon_away_limit_s},
         {"poll_interval_ms", c.poll_interval_ms},
         {"cgroups", c.cgroups},
         {"cgroup_root", c.cgroup_root},
         {"mps", MpsModeName(c.mps)},
         {"allow_unenforced_slices", c.allow_unenforced_slices},
         {"mig_requests", c.mig_requests},
         {"mig_min_idle_s", c.mig_min_idle_s},
         {"mig_drain_after_s", c.mig_drain_after_s},
         {"mig_min_lifetime_s", c.mig_min_lifetime_s},
         {"mps_control", c.mps_control},
         {"mps_idle_quit_ms", c.mps_idle_quit_ms},
         {"mps_fault_policy", MpsFaultPolicyName(c.mps_fault_policy)},
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
         {"max_user_output_bytes", FormatSize(c.max_user_output_bytes)},
         {"state_reserve_bytes", FormatSize(c.state_reserve_bytes)},
         {"qos", QosJson(c.qos)},
         {"default_qos", c.default_qos},
         {"gpu_types", c.gpu_types}};
  return j.dump(2);
}

}  // namespace pinpoint::daemon
