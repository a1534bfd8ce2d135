#include "cli/submit_tasks.h"

#include <CLI/CLI.hpp>

#include "cli/submit_request.h"
#include "cli/usage.h"
#include "pinpoint/escape.h"

namespace pinpoint::cli {

namespace {

// The lowest node count of Slurm's -N MIN[-MAX], or -1 when it does not read.
int MinNodes(const std::string& text) {
  std::string min = text.substr(0, text.find('-'));
  if (min.empty() || min.size() > 6 || min.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stoi(min);
}

}  // namespace

void AddTaskOptions(CLI::App* submit, SubmitTaskArgs& tasks) {
  submit
      ->add_option("-n,--ntasks", tasks.ntasks,
                   "Slurm's tasks: how many `srun` starts in the job (SLURM_NTASKS); with it, -c "
                   "counts per task")
      ->check(CountIn(1, kMaxTasks));
  submit
      ->add_option("--ntasks-per-node", tasks.ntasks_per_node,
                   "the same as --ntasks on pinpoint's one node")
      ->check(CountIn(1, kMaxTasks));
  submit->add_option("-N,--nodes", tasks.nodes, "1: a pinpoint job runs on one node");
  submit->add_option("--gpus-per-task", tasks.gpus_per_task,
                     "[TYPE:]N whole GPUs for each task: --gpus is --ntasks times this, and `srun` "
                     "gives each task its own");
}

Status ApplyTasks(const SubmitTaskArgs& tasks, bool gpus_given, JobRequest& r) {
  if (!tasks.nodes.empty()) {
    int min = MinNodes(tasks.nodes);
    if (min < 0)
      return InvalidArgument("-N/--nodes: '" + EscapeForTerminal(tasks.nodes) +
                             "' is not a node count (N or MIN-MAX)");
    if (min != 1)
      return InvalidArgument("-N/--nodes " + EscapeForTerminal(tasks.nodes) +
                             ": a pinpoint job runs on one node; ask for 1, or submit it to a "
                             "cluster's Slurm");
  }
  if (tasks.ntasks > 0 && tasks.ntasks_per_node > 0 && tasks.ntasks != tasks.ntasks_per_node)
    return InvalidArgument("--ntasks " + std::to_string(tasks.ntasks) + " and --ntasks-per-node " +
                           std::to_string(tasks.ntasks_per_node) +
                           " differ, and a pinpoint job has one node");
  r.ntasks = tasks.ntasks > 0            ? tasks.ntasks
             : tasks.ntasks_per_node > 0 ? tasks.ntasks_per_node
                                         : 1;
  int64_t cpus = static_cast<int64_t>(r.cpus) * r.ntasks;
  if (cpus > 65536)
    return InvalidArgument("--ntasks " + std::to_string(r.ntasks) + " x -c " +
                           std::to_string(r.cpus) + " is more than 65536 CPUs");
  r.cpus = static_cast<int>(cpus);
  if (tasks.gpus_per_task.empty()) return Status::Ok();
  std::string type;
  auto per_task = ParseGpuCount(tasks.gpus_per_task, &type);
  if (!per_task.ok() || *per_task < 1)
    return InvalidArgument("--gpus-per-task: '" + EscapeForTerminal(tasks.gpus_per_task) +
                           "' is not a GPU count (N or TYPE:N, N from 1 to 1024)");
  if (!type.empty() && !r.gpu_type.empty() && type != r.gpu_type)
    return InvalidArgument("--gpus-per-task names GPU type '" + EscapeForTerminal(type) +
                           "' and --gpus '" + EscapeForTerminal(r.gpu_type) + "': give one");
  if (!type.empty()) r.gpu_type = type;
  int64_t gpus = static_cast<int64_t>(*per_task) * r.ntasks;
  if (gpus > 1024)
    return InvalidArgument("--gpus-per-task " + std::to_string(*per_task) + " x " +
                           std::to_string(r.ntasks) + " tasks is more than 1024 GPUs");
  if (gpus_given && r.gpus != gpus)
    return InvalidArgument("--gpus " + std::to_string(r.gpus) + " is not --gpus-per-task " +
                           std::to_string(*per_task) + " x " + std::to_string(r.ntasks) +
                           " tasks: give one of them");
  r.gpus = static_cast<int>(gpus);
  r.gpus_per_task = *per_task;
  return Status::Ok();
}

}  // namespace pinpoint::cli
