// pinpoint's `srun`, inside a pinpoint job on a node without Slurm (docs/cli.md "Slurm's
// environment and srun"): the command line of a job step, as Slurm's srun reads it. Pure.
#pragma once

#include <string>
#include <vector>

#include "pinpoint/status.h"

namespace pinpoint::srun {

// What a step asks for. 0 in a count: not given (the job's own value applies).
struct StepArgs {
  int ntasks = 0;         // -n/--ntasks, --ntasks-per-node (one node)
  int cpus_per_task = 0;  // -c/--cpus-per-task
  int gpus_per_task = 0;  // --gpus-per-task
  int gpus = 0;           // --gpus/-G N, --gres=gpu[:TYPE]:N, --gpus-per-node: the step's GPUs
  bool label = false;     // -l/--label: each output line starts with "TASK: "
  std::string chdir;      // -D/--chdir
  std::vector<std::string> command;
  // One line each for a flag that was accepted without being honoured (for stderr).
  std::vector<std::string> warnings;
};

// Reads srun's words (`args`, without the program name): options up to the first word that is
// not one, which starts the command. Accepted and honoured: -n/--ntasks, --ntasks-per-node,
// -N/--nodes 1, -c/--cpus-per-task, --gpus-per-task, --gpus/-G, --gres=gpu:N, --gpus-per-node,
// -l/--label, -D/--chdir. Accepted as they change nothing on one node, silently: --mpi,
// --export=ALL, -u/--unbuffered, --cpu-bind, --gpu-bind, --kill-on-bad-exit/-K, --exclusive,
// --overlap, --exact, -p/--partition, -J/--job-name, -A/--account, -q/--qos, -t/--time, --mem,
// --mem-per-cpu, --mem-per-gpu, --cpus-per-gpu, --hint, -m/--distribution, --jobid, -Q/--quiet,
// -v/--verbose, -W/--wait, --propagate, --accel-bind, --mpi, --nodelist/-w (this node),
// --ntasks-per-gpu... Accepted with one warning line: --export other than ALL, -o/-e/-i,
// --cpu-freq, --signal. Errors: kInvalidArgument, one line: more than one node (-N 2), an
// unknown option, a count that is not one, a --gres that is not gpu, no command.
Result<StepArgs> ParseStepArgs(const std::vector<std::string>& args);

}  // namespace pinpoint::srun
