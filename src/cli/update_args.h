// `pinpoint update`'s options and the JobEdit they make (docs/cli.md "update", api.h "update"):
// what Slurm's `scontrol update` changes in a job that waits.
#pragma once

#include <optional>
#include <string>

#include "pinpoint/api.h"
#include "pinpoint/status.h"

namespace CLI {
class App;
}  // namespace CLI

namespace pinpoint::cli {

struct UpdateArgs {
  std::string time, gpu_mem, gpu_share;  // as submit's --time, --gpu-mem, --gpu-share
  std::optional<int> priority;
  std::optional<std::string> name;
  std::optional<int> array_limit;
  std::optional<int> gpus, cpus;  // as submit's --gpus and --cpus
  std::string mem;                // as submit's --mem
  std::string mig;                // as submit's --mig; "none": any device again
  std::string qos;                // a service class
};

// Adds update's options (-t/--time, --gpu-mem, --gpu-share, --priority, -J/--name/--job-name,
// --array-limit, --gpus, --cpus, --mem, --mig) to `update`, read into `args`.
void AddUpdateOptions(CLI::App* update, UpdateArgs& args);

// The edit `args` asks for. Errors: kInvalidArgument with the line for the user (a size, share or
// time that does not read; nothing to change).
Result<JobEdit> BuildEdit(const UpdateArgs& args);

}  // namespace pinpoint::cli
