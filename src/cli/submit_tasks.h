// Slurm's task layout on a pinpoint node (docs/cli.md "Slurm's environment and srun"): `submit`'s
// -n/--ntasks, --ntasks-per-node, -N/--nodes and --gpus-per-task, so that a job script's
// `#SBATCH` lines for them are honoured (no warning) and `srun` in the job starts that many tasks.
#pragma once

#include <string>

#include "pinpoint/job.h"
#include "pinpoint/status.h"

namespace CLI {
class App;  // CLI11's (submit_tasks.cc)
}  // namespace CLI

namespace pinpoint::cli {

struct SubmitTaskArgs {
  int ntasks = 0;                  // -n/--ntasks; 0: not given
  int ntasks_per_node = 0;         // --ntasks-per-node; on one node the same as --ntasks
  std::string nodes = {};          // -N/--nodes MIN[-MAX]: only a MIN of 1 fits one node
  std::string gpus_per_task = {};  // --gpus-per-task [TYPE:]N; "": not given
};

// Adds the options above to `submit`.
void AddTaskOptions(CLI::App* submit, SubmitTaskArgs& tasks);

// Puts `tasks` into `r`, whose cpus and gpus are already those of the rest of the command line
// (`gpus_given`: --gpus or a --gres said how many): ntasks, with -c counted per task as Slurm
// counts it (cpus = ntasks x -c), and gpus_per_task, with gpus = ntasks x gpus_per_task when no
// --gpus was given. Errors: kInvalidArgument, one line: more than one node (-N 2), --ntasks and
// --ntasks-per-node that differ, --gpus and --gpus-per-task that do not agree, a product out of
// range.
Status ApplyTasks(const SubmitTaskArgs& tasks, bool gpus_given, JobRequest& r);

}  // namespace pinpoint::cli
