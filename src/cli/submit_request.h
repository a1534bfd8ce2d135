// `pinpoint submit`'s options and the JobRequest they make (docs/cli.md "submit"): sizes, the
// device list and the exported environment read from this process, the request checked as the
// daemon will check it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cli/submit_sched.h"
#include "cli/submit_tasks.h"
#include "pinpoint/api_jobs.h"
#include "pinpoint/job.h"
#include "pinpoint/status.h"

namespace CLI {
class Option;  // CLI11's (cli.cc): only its address is kept here
}  // namespace CLI

namespace pinpoint::cli {

struct SubmitArgs {
  std::string gpus_text;    // -G/--gpus/--gpus-per-node: N or Slurm's TYPE:N
  std::string mem_per_cpu;  // --mem-per-cpu SIZE (a bare number: MiB)
  std::string open_mode;    // --open-mode append|truncate (Slurm's)
  std::string gpu_mem, gpu_share, mem, name, as_user;
  std::string mig;  // --mig PROFILE
  std::string qos;  // -q/--qos NAME: the service class
  std::string devices;
  std::string export_env = "ALL";
  std::string output, error;
  std::string chdir;  // -D/--chdir DIR: the job's working directory (relative: to this one)
  bool hold = false;
  int cpus = 1;
  int priority = 0;
  bool wait = false;
  bool parsable = false;  // --parsable (sbatch's): the job's (or array's) id alone on stdout
  bool requeue = false;   // --requeue (Slurm's)
  SubmitSchedArgs sched;  // --time, --after, --afterok
  SubmitTaskArgs tasks;   // -n, --ntasks-per-node, -N, --gpus-per-task (Slurm's)
  std::vector<std::string> command;
  // The request's fields whose values a job script's directives gave (ScriptFieldsOf), sent for
  // the daemon to judge with the rights of the user the job runs as.
  ScriptOrigins from_script;
  // Each name of an option a script's directive gave ("--time", "-t"), with its place
  // ("job.sh:3"): an error about its value names the place (AtScriptPlace).
  std::vector<std::pair<std::string, std::string>> script_places;
  std::string array;                    // --array SPEC (array_spec.h)
  CLI::Option* array_option = nullptr;  // to tell `--array ''` from no --array
};

// The request `a` makes, from this process's working directory, umask and environment (--export
// selects; `dropped` gets the names left out for looking like secrets). Errors: kInvalidArgument
// with the line for the user.
Result<JobRequest> BuildRequest(const SubmitArgs& a, std::vector<std::string>* dropped);

// `s` with the place of the directive that gave the option it names first ("--time: ..." becomes
// "job.sh:3: --time: ..."), when a script's directive gave it; else `s`.
Status AtScriptPlace(const SubmitArgs& a, Status s);

// What can be checked at submit, as the submitting user, of whether the job can start (a job
// that cannot used to be accepted, then fail at launch and vanish from the queue): its working
// directory can be entered, its command is found on the job's PATH (glibc's /bin:/usr/bin
// without one) or at its path, and is an executable file, and the directories of -o/-e files
// (without a % pattern) can be written. Nothing is checked for --as-user (another user's rights).
// Errors: kInvalidArgument, one line.
Status CheckRunnable(const JobRequest& r);

// A slice's memory as --gpu-mem gives it ("4G", "512MiB"). Errors: kInvalidArgument naming
// --gpu-mem (a size that does not read, or 0).
Result<uint64_t> ParseGpuMem(const std::string& text);

// A fresh random key per `pinpoint submit` (docs/cli.md); empty when no randomness is at hand,
// and then the submit is not retried.
std::string IdempotencyKey();

// --gpus's value: "N", or Slurm's "TYPE:N" (N GPUs of this node, whatever their model, `type`
// gets TYPE). Errors: kInvalidArgument naming the option and the text.
Result<int> ParseGpuCount(const std::string& text, std::string* type = nullptr);

// A host memory size as Slurm reads --mem: a bare number is MiB ("1000"), else ParseSize's
// ("8G", "32GB", "8192M"). Errors: kInvalidArgument naming `option`.
Result<uint64_t> ParseHostMem(const std::string& option, const std::string& text);

// "1" or "0,2": device indices. Errors: kInvalidArgument naming the text.
Result<std::vector<int>> ParseDeviceList(const std::string& text);

}  // namespace pinpoint::cli
