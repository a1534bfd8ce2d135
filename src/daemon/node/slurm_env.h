// The environment a Slurm job sees, given to every pinpoint job (docs/cli.md "Slurm's environment
// and srun"), so that a Slurm job script runs unchanged: SLURM_JOB_ID, the array's
// SLURM_ARRAY_TASK_ID, SLURM_SUBMIT_DIR, SLURM_CPUS_PER_TASK, SLURM_NTASKS and the rest, with
// Slurm's meanings, and pinpoint's `srun` first on the PATH. Where a real Slurm runs the job
// (`pinpoint slurm run` inside a Slurm job: docs/cluster.md), Slurm's own variables stay and
// nothing is added. Pure.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/job_record.h"

namespace pinpoint::daemon {

// Set in every job given pinpoint's Slurm variables: a job submitted from inside it carries its
// SLURM_* names, which are then pinpoint's own and replaced, not a real Slurm's.
inline constexpr char kSlurmSetByPinpointVar[] = "PINPOINT_SLURM_ENV";
// The directory of pinpoint's srun, for a login shell's /etc/profile.d/pinpoint.sh to put first on
// its PATH again (packaging/pinpoint-profile.sh).
inline constexpr char kSrunDirVar[] = "PINPOINT_SRUN_DIR";

// What the node knows that the Slurm variables name.
struct SlurmFacts {
  std::string node_name;  // the node's short host name (SLURMD_NODENAME, SLURM_JOB_NODELIST)
  // The directory that holds pinpoint's `srun` alone (<libexec>/pinpoint/slurm), put first on
  // the PATH; "": none is installed, the PATH is left as it is.
  std::string srun_dir;
};

// Whether the submitted environment `env` is a real Slurm job's: it carries SLURM_JOB_ID and
// pinpoint did not set it (no kSlurmSetByPinpointVar). Anyone can set SLURM_JOB_ID; doing so only
// keeps pinpoint's variables and srun from the submitter's own job.
bool UnderRealSlurm(const std::map<std::string, std::string>& env);

// Sets the Slurm variables of `job` (started: its allocations and start time are known) into
// `env`, its environment so far, unless UnderRealSlurm(env): every SLURM_* and SLURMD_* name that
// came with it is removed first, then SLURM_JOB_ID, SLURM_JOBID, SLURM_JOB_NAME (its name, else
// its program's base name), SLURM_JOB_USER, SLURM_JOB_UID, SLURM_JOB_GID, SLURM_SUBMIT_DIR
// (request.submit_dir, else its cwd), SLURM_SUBMIT_HOST (request.submit_host, else the node),
// SLURMD_NODENAME, SLURM_NODELIST, SLURM_JOB_NODELIST (the node), SLURM_NNODES,
// SLURM_JOB_NUM_NODES (1), SLURM_NODEID, SLURM_PROCID, SLURM_LOCALID (0: the script is task 0),
// SLURM_NTASKS, SLURM_NPROCS, SLURM_NTASKS_PER_NODE, SLURM_TASKS_PER_NODE (request.ntasks),
// SLURM_CPUS_PER_TASK (cpus / ntasks, at least 1), SLURM_CPUS_ON_NODE, SLURM_JOB_CPUS_PER_NODE
// (cpus), SLURM_MEM_PER_NODE (mem in MiB, when set), SLURM_GPUS_ON_NODE, SLURM_JOB_GPUS,
// SLURM_STEP_GPUS, GPU_DEVICE_ORDINAL (its GPUs as nvidia-smi numbers them, `gpu_indices`; for a
// job with GPUs), SLURM_GPUS_PER_TASK (when asked), SLURM_JOB_START_TIME and SLURM_JOB_END_TIME
// (Unix seconds; the end with a time limit), SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID,
// SLURM_ARRAY_TASK_COUNT, SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_MAX, SLURM_ARRAY_TASK_STEP (for
// an array's task), kSlurmSetByPinpointVar, and `facts.srun_dir` first on PATH (after glibc's
// default /bin:/usr/bin when there was no PATH).
void SetSlurmEnvironment(const JobRecord& job, const SlurmFacts& facts,
                         const std::vector<int>& gpu_indices,
                         std::map<std::string, std::string>& env);

// The step Slurm gives an array of `count` tasks from `min` to `max` (SLURM_ARRAY_TASK_STEP):
// the distance between its indices when they are evenly spaced as far as these tell, else 1.
int ArrayStep(int count, int min, int max);

}  // namespace pinpoint::daemon
