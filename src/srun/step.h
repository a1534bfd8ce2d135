// A job step of pinpoint's `srun` (docs/cli.md "Slurm's environment and srun"): its tasks planned
// from the job's own environment (pure), then run as children of srun, each in the job's process
// group, so that what pinpoint sends the job reaches them too.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "pinpoint/status.h"
#include "srun/srun_args.h"

namespace pinpoint::srun {

// The environment of each task of the step `args` asks for, in a job whose environment is `env`
// (its own Slurm variables: SLURM_NTASKS, SLURM_CPUS_ON_NODE, SLURM_GPUS_PER_TASK,
// SLURM_JOB_GPUS; and CUDA_VISIBLE_DEVICES, the job's GPUs), for the step numbered `step_id`.
// Tasks: --ntasks, else the job's SLURM_NTASKS, else 1; each gets SLURM_PROCID and SLURM_LOCALID
// (its index), SLURM_NODEID 0, SLURM_STEP_ID and SLURM_STEPID, SLURM_NTASKS, SLURM_NPROCS,
// SLURM_STEP_NUM_TASKS, SLURM_STEP_NUM_NODES, SLURM_STEP_NODELIST, SLURM_STEP_TASKS_PER_NODE,
// SLURM_CPUS_PER_TASK (with -c). The step's GPUs are the first --gpus of the job's (all without
// it); with --gpus-per-task G (or the job's SLURM_GPUS_PER_TASK) task i sees the i-th G of them in
// CUDA_VISIBLE_DEVICES and SLURM_STEP_GPUS, else every task sees all of the step's.
// Errors: kFailedPrecondition, one line: not inside a pinpoint job (no PINPOINT_JOB_ID); more
// tasks x CPUs than the job's SLURM_CPUS_ON_NODE; more GPUs than the job has.
Result<std::vector<std::vector<std::string>>> PlanStep(
    const StepArgs& args, const std::map<std::string, std::string>& env, int64_t step_id);

// Runs the step: one child per entry of `task_envs` (args.command, in args.chdir when set), each
// in srun's process group (the job's). A signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
// SIGUSR2) sent to srun by a process of the job (its process group) is passed to every task still
// running; one sent to the whole job (pinpoint cancel, --signal, a time limit) already reached them
// and is not sent twice. With args.label each line the tasks write starts with "I: " (I the task's
// index). Waits for every task, and returns the step's exit code: the worst of the tasks' (128 + N
// for one killed by signal N); 1 with a line on `err` when a task cannot be started (the others are
// killed).
int RunStep(const StepArgs& args, const std::vector<std::vector<std::string>>& task_envs,
            std::ostream& err);

}  // namespace pinpoint::srun
