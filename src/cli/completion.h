// Shell completion for pinpoint, made from the command line's own definition (its CLI11 app), so
// that a new subcommand or option is completed as soon as it exists. `pinpoint completion bash`
// and `pinpoint completion zsh` print the scripts; the build installs them (docs/cli.md).
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace pinpoint::cli {

struct CompletionOption {
  std::vector<std::string> names;  // "--gpus", "-n", ...
  bool takes_value = false;        // the next word is its value, not a command or option
  std::string help;
};

// One command of the tree: the program itself at the root.
struct CompletionCommand {
  std::string name;
  std::string help;
  std::vector<CompletionOption> options;
  std::vector<CompletionCommand> subcommands;
};

// The commands and named options of `app`, recursively (positional arguments are left out).
CompletionCommand DescribeApp(const CLI::App& app);

// The companions `pinpoint bench`, `pinpoint slurm` and `pinpoint htcondor`, which are other
// programs (cli.cc, ExecCompanion). Their words are listed here; tests/completion checks them
// against the programs themselves.
std::vector<CompletionCommand> CompanionCommands();

// A bash completion script for `root` (source it, or install it as
// share/bash-completion/completions/<name>). Deterministic.
std::string BashCompletion(const CompletionCommand& root);
// A zsh completion function for `root` (install it as _<name> in a directory of $fpath).
std::string ZshCompletion(const CompletionCommand& root);

}  // namespace pinpoint::cli
