// spec.json, the job's launch spec as the launcher writes it and the shim reads it (shim.h).
#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "common/json_reader.h"
#include "launch/shim.h"

namespace pinpoint::launch {

using nlohmann::json;

Status WriteSpec(int dir_fd, const LaunchSpec& spec) {
  json j{{"job_id", spec.job_id},
         {"argv", spec.argv},
         {"cwd", spec.cwd},
         {"env", spec.env},
         {"switch_user", spec.switch_user},
         {"uid", spec.uid},
         {"gid", spec.gid},
         {"groups", spec.groups},
         {"job_dir", spec.job_dir},
         {"cgroup_dir", spec.cgroup_dir},
         {"stdout_path", spec.stdout_path},
         {"stderr_path", spec.stderr_path},
         {"umask", spec.umask},
         {"orphan_check_ms", spec.orphan_check_ms},
         {"orphan_grace_ms", spec.orphan_grace_ms},
         {"daemon_lock", spec.daemon_lock},
         {"daemon_away_ms", spec.daemon_away_ms},
         {"cpus", spec.cpus},
         {"max_output_bytes", spec.max_output_bytes},
         {"output_check_ms", spec.output_check_ms}};
  // Not fsynced: the job's record is durable in the store, and a power loss ends the shim too.
  return WriteFileAtomicAt(dir_fd, kSpecFile, j.dump(), 0600, /*durable=*/false);
}

Result<LaunchSpec> ReadSpec(int dir_fd) {
  auto text = ReadFileBoundedAt(dir_fd, kSpecFile, kMaxSpecBytes);
  if (!text.ok()) return text.status();
  json j = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  LaunchSpec spec;
  auto in = JsonReader::Record(j, "spec");
  for (const char* key : {"job_id", "argv", "cwd", "env", "switch_user", "uid", "gid", "groups",
                          "job_dir", "cgroup_dir"})
    in.Require(key);
  in.Integer("job_id", &spec.job_id);
  in.StringList("argv", &spec.argv);
  in.String("cwd", &spec.cwd);
  in.StringList("env", &spec.env);
  in.Bool("switch_user", &spec.switch_user);
  in.Integer("uid", &spec.uid);
  in.Integer("gid", &spec.gid);
  in.IntegerList("groups", &spec.groups);
  in.String("job_dir", &spec.job_dir);
  in.String("cgroup_dir", &spec.cgroup_dir);
  in.String("stdout_path", &spec.stdout_path);
  in.String("stderr_path", &spec.stderr_path);
  in.Integer("umask", &spec.umask);  // a spec of an earlier version has none: 077
  in.Integer("orphan_check_ms", &spec.orphan_check_ms);  // nor these: their defaults
  in.Integer("orphan_grace_ms", &spec.orphan_grace_ms);
  in.String("daemon_lock", &spec.daemon_lock);
  in.Integer("daemon_away_ms", &spec.daemon_away_ms);
  in.IntegerList("cpus", &spec.cpus);  // a spec of an earlier version has none: any CPU
  in.Integer("max_output_bytes", &spec.max_output_bytes);  // nor these: no bound
  in.Integer("output_check_ms", &spec.output_check_ms);
  if (!in.ok()) return IoError("bad spec: " + in.error().message());
  if (spec.argv.empty()) return IoError("spec has no argv");
  if (spec.orphan_check_ms < 1 || spec.orphan_grace_ms < 0 || spec.daemon_away_ms < 0 ||
      spec.output_check_ms < 1)
    return IoError("bad spec: orphan_check_ms, orphan_grace_ms, daemon_away_ms or output_check_ms");
  return spec;
}

}  // namespace pinpoint::launch
