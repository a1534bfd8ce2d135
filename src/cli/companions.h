// The programs `pinpoint NAME ...` hands its words to (pinpoint-bench, pinpoint-slurm,
// pinpoint-htcondor: common/companion.h), and `pinpoint completion bash|zsh`, which knows their
// words too. docs/benchmarks.md, docs/cluster.md.
#pragma once

#include <ostream>
#include <string>

namespace CLI {
class App;
}  // namespace CLI

namespace pinpoint::cli {

// The programs `pinpoint NAME ...` runs (ExecCompanion), listed in the help with the subcommands.
struct Companion {
  const char* name;
  const char* program;
  const char* help;
};
constexpr Companion kCompanions[] = {
    {"bench", "pinpoint-bench",
     "Measure a workload: one job per GPU, time-slicing, pinpoint's MPS slices, bare MPS "
     "(pinpoint-bench)"},
    {"slurm", "pinpoint-slurm",
     "Slurm: gres.conf, running a job step as its slice, Prolog and Epilog (pinpoint-slurm)"},
    {"htcondor", "pinpoint-htcondor",
     "HTCondor: the startd configuration and the job wrapper (pinpoint-htcondor)"},
};

// Runs companion `program` in place of this process (execv) with the words after
// argv[command_arg]. It gets PINPOINT_BIN (this binary) and, when `socket` is not empty (--socket
// came before the command), PINPOINT_SOCKET. Returns only when it could not run: 1, with one line
// on `err`.
int ExecCompanion(const std::string& program, int argc, char** argv, int command_arg,
                  const std::string& socket, std::ostream& err);

// `pinpoint completion SHELL` (not listed in the help): the completion script of `app` plus the
// companions' words on `out`; 2 with one line on `err` for a shell other than bash or zsh.
int PrintCompletion(const CLI::App& app, const std::string& shell, std::ostream& out,
                    std::ostream& err);

}  // namespace pinpoint::cli
