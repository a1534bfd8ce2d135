// pinpoint's srun: a job step inside a pinpoint job on a node without Slurm (srun/step.h).
#include <unistd.h>

#include <iostream>

#include "srun/step.h"

extern char** environ;

int main(int argc, char** argv) {
  using namespace pinpoint::srun;
  auto args = ParseStepArgs(std::vector<std::string>(argv + 1, argv + argc));
  if (!args.ok()) {
    std::cerr << args.status().message() << "\n";
    return 1;
  }
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    size_t eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  // A number no other step of the job has: srun's pid (steps run one after another or side by
  // side, each its own srun).
  auto plan = PlanStep(*args, env, ::getpid());
  if (!plan.ok()) {
    std::cerr << plan.status().message() << "\n";
    return 1;
  }
  for (const auto& w : args->warnings) std::cerr << w << "\n";
  return RunStep(*args, *plan, std::cerr);
}
