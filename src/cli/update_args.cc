#include "cli/update_args.h"

#include <CLI/CLI.hpp>

#include "cli/submit_request.h"
#include "cli/usage.h"
#include "pinpoint/array_spec.h"
#include "pinpoint/escape.h"
#include "pinpoint/time_limit.h"
#include "pinpoint/units.h"

namespace pinpoint::cli {

void AddUpdateOptions(CLI::App* c, UpdateArgs& args) {
  c->add_option("-t,--time", args.time,
                "a new time limit, as submit's --time (a running job: lower it; root: any)");
  c->add_option("--gpu-mem", args.gpu_mem, "a new slice memory (e.g. 4G)");
  c->add_option("--gpu-share", args.gpu_share, "a new SM share of the slice (e.g. 20%)");
  c->add_option("--priority", args.priority, "a new priority: higher runs first")
      ->check(CountIn(-1000000, 1000000));
  c->add_option("-J,--name,--job-name", args.name, "a new name");
  c->add_option("--array-limit", args.array_limit,
                "at most K tasks of each array running at once; 0 lifts the limit")
      ->check(CountIn(0, kMaxArrayTasks));
  c->add_option("--gpus", args.gpus,
                "new whole GPUs, or with a slice the number of slices; 0: no GPU")
      ->check(CountIn(0, 1024));
  c->add_option("-c,--cpus,--cpus-per-task", args.cpus, "new host CPUs")->check(CountIn(1, 65536));
  c->add_option("--mem", args.mem, "new host memory (e.g. 8G; 0 lifts the limit)");
  c->add_option("--mig", args.mig,
                "a MIG instance of this profile (e.g. 1g.10gb); none: any device again");
  c->add_option("--qos", args.qos, "a new service class (pinpoint qos lists them)");
}

Result<JobEdit> BuildEdit(const UpdateArgs& args) {
  JobEdit edit;
  if (!args.time.empty()) {
    auto seconds = ParseTimeLimit(args.time);
    if (!seconds.ok()) return InvalidArgument("--time: " + seconds.status().message());
    if (*seconds == 0) return InvalidArgument("--time must be more than 0");
    edit.time_limit_s = *seconds;
  }
  if (!args.gpu_mem.empty()) {
    auto mem = ParseGpuMem(args.gpu_mem);
    if (!mem.ok()) return mem.status();
    edit.gpu_mem_bytes = *mem;
  }
  if (!args.gpu_share.empty()) {
    auto share = ParsePercent(args.gpu_share);
    if (!share.ok()) return InvalidArgument("--gpu-share: " + share.status().message());
    edit.gpu_share_pct = *share;
  }
  edit.priority = args.priority;
  edit.name = args.name;
  edit.array_limit = args.array_limit;
  edit.gpus = args.gpus;
  edit.cpus = args.cpus;
  if (!args.mem.empty()) {
    auto mem = ParseSize(args.mem);
    if (!mem.ok()) return InvalidArgument("--mem: " + mem.status().message());
    edit.mem_bytes = *mem;
  }
  if (!args.mig.empty()) edit.mig_profile = args.mig == "none" ? "" : args.mig;
  if (!args.qos.empty()) edit.qos = args.qos;
  if (edit.empty())
    return InvalidArgument(
        "say what to change: --time, --gpu-mem, --gpu-share, --gpus, --cpus, --mem, --mig, "
        "--qos, --priority, --name or --array-limit");
  return edit;
}

}  // namespace pinpoint::cli
