#include "daemon/node/slurm_env.h"

#include <string_view>

namespace pinpoint::daemon {

namespace {

std::string Join(const std::vector<int>& numbers) {
  std::string out;
  for (int n : numbers) out += (out.empty() ? "" : ",") + std::to_string(n);
  return out;
}

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Variables a batch system gave the submitter's own job: not this one's.
void EraseSlurmNames(std::map<std::string, std::string>& env) {
  for (auto it = env.begin(); it != env.end();) {
    std::string_view name = it->first;
    if (name.starts_with("SLURM_") || name.starts_with("SLURMD_") || name == "GPU_DEVICE_ORDINAL")
      it = env.erase(it);
    else
      ++it;
  }
}

void SetArray(const ArrayTask& array, std::map<std::string, std::string>& env) {
  if (array.array_id == 0) return;
  env["SLURM_ARRAY_JOB_ID"] = std::to_string(array.array_id);
  env["SLURM_ARRAY_TASK_ID"] = std::to_string(array.index);
  env["SLURM_ARRAY_TASK_COUNT"] = std::to_string(array.count);
  env["SLURM_ARRAY_TASK_MIN"] = std::to_string(array.min_index);
  env["SLURM_ARRAY_TASK_MAX"] = std::to_string(array.max_index);
  env["SLURM_ARRAY_TASK_STEP"] =
      std::to_string(ArrayStep(array.count, array.min_index, array.max_index));
}

void SetResources(const JobRecord& job, const std::vector<int>& gpu_indices,
                  std::map<std::string, std::string>& env) {
  const JobRequest& r = job.request;
  int ntasks = r.ntasks > 0 ? r.ntasks : 1;
  for (const char* name :
       {"SLURM_NTASKS", "SLURM_NPROCS", "SLURM_NTASKS_PER_NODE", "SLURM_TASKS_PER_NODE"})
    env[name] = std::to_string(ntasks);
  env["SLURM_CPUS_PER_TASK"] = std::to_string(std::max(1, r.cpus / ntasks));
  env["SLURM_CPUS_ON_NODE"] = std::to_string(r.cpus);
  env["SLURM_JOB_CPUS_PER_NODE"] = std::to_string(r.cpus);
  if (r.mem_bytes > 0) env["SLURM_MEM_PER_NODE"] = std::to_string(r.mem_bytes >> 20);
  if (!gpu_indices.empty()) {
    env["SLURM_GPUS_ON_NODE"] = std::to_string(gpu_indices.size());
    for (const char* name : {"SLURM_JOB_GPUS", "SLURM_STEP_GPUS", "GPU_DEVICE_ORDINAL"})
      env[name] = Join(gpu_indices);
  }
  if (r.gpus_per_task > 0) env["SLURM_GPUS_PER_TASK"] = std::to_string(r.gpus_per_task);
}

}  // namespace

bool UnderRealSlurm(const std::map<std::string, std::string>& env) {
  return env.count("SLURM_JOB_ID") > 0 && env.count(kSlurmSetByPinpointVar) == 0;
}

int ArrayStep(int count, int min, int max) {
  if (count <= 1 || max <= min || (max - min) % (count - 1) != 0) return 1;
  return (max - min) / (count - 1);
}

void SetSlurmEnvironment(const JobRecord& job, const SlurmFacts& facts,
                         const std::vector<int>& gpu_indices,
                         std::map<std::string, std::string>& env) {
  if (UnderRealSlurm(env)) return;
  EraseSlurmNames(env);
  const JobRequest& r = job.request;
  std::string id = std::to_string(job.id);
  env["SLURM_JOB_ID"] = id;
  env["SLURM_JOBID"] = id;
  env["SLURM_JOB_NAME"] = !r.name.empty() ? r.name : r.argv.empty() ? "" : BaseName(r.argv[0]);
  env["SLURM_JOB_USER"] = job.user;
  env["SLURM_JOB_UID"] = std::to_string(job.uid);
  env["SLURM_JOB_GID"] = std::to_string(job.gid);
  env["SLURM_SUBMIT_DIR"] = !r.submit_dir.empty() ? r.submit_dir : r.cwd;
  env["SLURM_SUBMIT_HOST"] = !r.submit_host.empty() ? r.submit_host : facts.node_name;
  for (const char* name :
       {"SLURMD_NODENAME", "SLURM_NODELIST", "SLURM_JOB_NODELIST", "SLURM_TOPOLOGY_ADDR"})
    env[name] = facts.node_name;
  for (const char* name : {"SLURM_NNODES", "SLURM_JOB_NUM_NODES"}) env[name] = "1";
  for (const char* name : {"SLURM_NODEID", "SLURM_PROCID", "SLURM_LOCALID"}) env[name] = "0";
  SetResources(job, gpu_indices, env);
  int64_t start_s = job.start_ms / 1000;
  env["SLURM_JOB_START_TIME"] = std::to_string(start_s);
  if (r.time_limit_s > 0) env["SLURM_JOB_END_TIME"] = std::to_string(start_s + r.time_limit_s);
  SetArray(job.array, env);
  env[kSlurmSetByPinpointVar] = "1";
  if (facts.srun_dir.empty()) return;
  // A login shell (`#!/bin/bash -l`) sets its PATH anew from /etc/profile: the package's
  // /etc/profile.d/pinpoint.sh puts this directory first again (packaging/pinpoint-profile.sh).
  env[kSrunDirVar] = facts.srun_dir;
  auto path = env.find("PATH");
  env["PATH"] = facts.srun_dir + ":" + (path != env.end() ? path->second : "/bin:/usr/bin");
}

}  // namespace pinpoint::daemon
