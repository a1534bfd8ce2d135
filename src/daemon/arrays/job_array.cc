#include "daemon/arrays/job_array.h"

#include <nlohmann/json.hpp>

#include "pinpoint/units.h"

namespace pinpoint::daemon {

Status CheckArraySize(const ArraySpec& spec, const JobRequest& request, int max_tasks) {
  size_t tasks = spec.indices.size();
  if (tasks > static_cast<size_t>(max_tasks))
    return InvalidArgument("an array of " + std::to_string(tasks) +
                           " tasks: this node takes at most " + std::to_string(max_tasks) +
                           " tasks in one array (max_array_tasks)");
  // Each task stores the whole request once it starts: one 1 MiB request must not become 10 GiB.
  size_t bytes = ToJson(request).dump().size() * tasks;
  if (bytes > kMaxArrayBytes)
    return InvalidArgument("an array of " + std::to_string(tasks) + " tasks would store " +
                           FormatSize(bytes) + " of job records, at most " +
                           FormatSize(kMaxArrayBytes) +
                           " in one array: pass less environment (--export) or submit fewer tasks");
  return Status::Ok();
}

bool IsFirstTaskOf(const JobRecord& first, const ArraySpec& spec) {
  const ArrayTask& a = first.array;
  return a.array_id == first.id && a.array_id != 0 && !spec.indices.empty() &&
         a.count == static_cast<int>(spec.indices.size()) && a.index == spec.indices.front() &&
         a.min_index == spec.indices.front() && a.max_index == spec.indices.back() &&
         a.limit == spec.limit;
}

void SetArrayEnvironment(const ArrayTask& array, std::map<std::string, std::string>& env) {
  for (const char* name :
       {"PINPOINT_ARRAY_JOB_ID", "PINPOINT_ARRAY_TASK_ID", "PINPOINT_ARRAY_TASK_COUNT",
        "PINPOINT_ARRAY_TASK_MIN", "PINPOINT_ARRAY_TASK_MAX"}) {
    env.erase(name);
  }
  if (array.array_id == 0) return;
  env["PINPOINT_ARRAY_JOB_ID"] = std::to_string(array.array_id);
  env["PINPOINT_ARRAY_TASK_ID"] = std::to_string(array.index);
  env["PINPOINT_ARRAY_TASK_COUNT"] = std::to_string(array.count);
  env["PINPOINT_ARRAY_TASK_MIN"] = std::to_string(array.min_index);
  env["PINPOINT_ARRAY_TASK_MAX"] = std::to_string(array.max_index);
}

}  // namespace pinpoint::daemon
