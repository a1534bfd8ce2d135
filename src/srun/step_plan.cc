#include <algorithm>

#include "srun/step.h"

namespace pinpoint::srun {

namespace {

std::vector<std::string> Split(const std::string& list) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= list.size() && !list.empty()) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    if (comma > at) out.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

std::string Join(const std::vector<std::string>& items, size_t from, size_t count) {
  std::string out;
  for (size_t i = from; i < from + count && i < items.size(); ++i)
    out += (out.empty() ? "" : ",") + items[i];
  return out;
}

// A count the job's environment gives, or `fallback` when it gives none that reads.
int EnvCount(const std::map<std::string, std::string>& env, const char* name, int fallback) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty() || it->second.size() > 7 ||
      it->second.find_first_not_of("0123456789") != std::string::npos)
    return fallback;
  int n = std::stoi(it->second);
  return n > 0 ? n : fallback;
}

std::string Get(const std::map<std::string, std::string>& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

}  // namespace

Result<std::vector<std::vector<std::string>>> PlanStep(
    const StepArgs& args, const std::map<std::string, std::string>& env, int64_t step_id) {
  if (env.count("PINPOINT_JOB_ID") == 0)
    return FailedPrecondition(
        "srun: not inside a pinpoint job (no PINPOINT_JOB_ID): this srun runs a step of a "
        "pinpoint job on a node without Slurm");
  int ntasks = args.ntasks > 0 ? args.ntasks : EnvCount(env, "SLURM_NTASKS", 1);
  int cpus = EnvCount(env, "SLURM_CPUS_ON_NODE", 0);
  int64_t wanted = static_cast<int64_t>(ntasks) * std::max(1, args.cpus_per_task);
  if (cpus > 0 && wanted > cpus)
    return FailedPrecondition("srun: " + std::to_string(ntasks) + " tasks x " +
                              std::to_string(std::max(1, args.cpus_per_task)) + " CPUs need " +
                              std::to_string(wanted) + " CPUs; the job has " +
                              std::to_string(cpus) + " (submit it with -n/-c)");
  std::vector<std::string> gpus = Split(Get(env, "CUDA_VISIBLE_DEVICES"));
  std::vector<std::string> indices = Split(Get(env, "SLURM_JOB_GPUS"));
  if (indices.size() != gpus.size()) indices = gpus;
  size_t step_gpus = gpus.size();
  if (args.gpus > 0) {
    if (static_cast<size_t>(args.gpus) > gpus.size())
      return FailedPrecondition("srun: the step asks for " + std::to_string(args.gpus) +
                                " GPUs; the job has " + std::to_string(gpus.size()));
    step_gpus = static_cast<size_t>(args.gpus);
  }
  int per_task =
      args.gpus_per_task > 0 ? args.gpus_per_task : EnvCount(env, "SLURM_GPUS_PER_TASK", 0);
  if (per_task > 0 && static_cast<size_t>(per_task) * static_cast<size_t>(ntasks) > step_gpus)
    return FailedPrecondition(
        "srun: " + std::to_string(ntasks) + " tasks x " + std::to_string(per_task) + " GPUs need " +
        std::to_string(per_task * ntasks) + " GPUs; the step has " + std::to_string(step_gpus));
  std::string nodes = Get(env, "SLURM_JOB_NODELIST");
  std::vector<std::vector<std::string>> out;
  for (int i = 0; i < ntasks; ++i) {
    std::map<std::string, std::string> task = env;
    std::string n = std::to_string(ntasks), step = std::to_string(step_id);
    task["SLURM_PROCID"] = task["SLURM_LOCALID"] = std::to_string(i);
    task["SLURM_NODEID"] = "0";
    task["SLURM_STEP_ID"] = task["SLURM_STEPID"] = step;
    for (const char* name :
         {"SLURM_NTASKS", "SLURM_NPROCS", "SLURM_STEP_NUM_TASKS", "SLURM_STEP_TASKS_PER_NODE"})
      task[name] = n;
    task["SLURM_STEP_NUM_NODES"] = "1";
    task["SLURM_STEP_NODELIST"] = nodes;
    if (args.cpus_per_task > 0) task["SLURM_CPUS_PER_TASK"] = std::to_string(args.cpus_per_task);
    if (!gpus.empty()) {
      size_t from = per_task > 0 ? static_cast<size_t>(i) * static_cast<size_t>(per_task) : 0;
      size_t count = per_task > 0 ? static_cast<size_t>(per_task) : step_gpus;
      task["CUDA_VISIBLE_DEVICES"] = Join(gpus, from, count);
      task["SLURM_STEP_GPUS"] = Join(indices, from, count);
      if (per_task > 0) task["SLURM_GPUS_PER_TASK"] = std::to_string(per_task);
    }
    std::vector<std::string> flat;
    for (const auto& [k, v] : task) flat.push_back(k + "=" + v);
    out.push_back(std::move(flat));
  }
  return out;
}

}  // namespace pinpoint::srun
