// A Slurm user's job script, as sbatch reads it (docs/cli.md "Coming from Slurm"): `pinpoint
// submit job.sh` finds job.sh in the current directory, and the script's `#SBATCH` lines (and
// `#PINPOINT` ones, which win over them) give options for every option pinpoint has; the command
// line wins over both. A directive pinpoint does not have is one warning line naming it.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pinpoint::cli {

// The most of a script read for its directives (sbatch reads them before the first command).
inline constexpr size_t kScriptReadBytes = 64 << 10;

// The directives of a script's text: the words of each `#SBATCH` line, then of each `#PINPOINT`
// line, in their order, up to the first line that is neither blank nor a comment (as sbatch
// stops). Words split at blanks; '...' and "..." quote. Pure.
std::vector<std::string> ParseDirectives(std::string_view text);
// The same words, each with the line it is on (the first line is 1).
struct DirectiveWord {
  std::string word;
  int line = 0;
};
std::vector<DirectiveWord> ParseDirectiveWords(std::string_view text);

// The file sbatch would read for the command's first word `word`, an absolute path: `word` itself
// when it holds a '/', else `word` in `cwd` when a regular file of that name there begins with
// "#!" (a script; a program named on the PATH is not looked for here). nullopt when it is no
// script. Reads at most kScriptReadBytes into `text` when given.
std::optional<std::string> ScriptFile(const std::string& word, const std::string& cwd,
                                      std::string* text = nullptr);

// Slurm's --gres value as --gpus's ("2", "v100:2"): its gpu entries (gpu, gpu:N, gpu:TYPE,
// gpu:TYPE:N, each maybe with a "(S:0-1)" of sockets) summed, with their type when all name the
// same one; nullopt when no entry is a GPU or a gpu entry does not read. `others` gets each
// entry that is no GPU ("nvme:200"). Pure.
std::optional<std::string> GresGpus(const std::string& value, std::vector<std::string>* others);

// The options of `directives` that `submit` has, in their order, each with its value words;
// Slurm's --gres as --gpus (GresGpus; its other entries are one warning each), a long option cut
// short (--out=) by its whole name. Each other word (an option pinpoint has not, one it refuses
// on its command line, a stray value) is left out with one line in `warnings` naming it; an
// option whose value is missing at the end is left out with a warning, never taking the command
// line's next word. A warning names the script and, with `lines` (each directive's line), its
// line: "pinpoint: job.sh:3: directive ...". `from`, when given, gets for each word returned the
// index in `directives` of the word it came from.
std::vector<std::string> DirectiveOptions(const CLI::App& submit,
                                          const std::vector<std::string>& directives,
                                          const std::string& script,
                                          std::vector<std::string>* warnings,
                                          std::vector<size_t>* from = nullptr,
                                          const std::vector<int>* lines = nullptr);

// An option of submit that a script's directive gave and the command line did not: its value is
// the script's, text from a file the job's user can write. `place` is where its last directive
// was: "job.sh:3" (the script as typed, escaped for a terminal, and the line).
struct ScriptOption {
  const CLI::Option* option = nullptr;
  std::string place;
};

// `pinpoint submit`'s words as ArrangeArgs left them (`args`, the subcommand at `index`): when the
// command is a script (ScriptFile, from this process's working directory), its first word becomes
// the script's path and its directives' options (DirectiveOptions) go before the command line's,
// which win over them (the submit's options take the last value given). Warnings as
// DirectiveOptions says. `from_script`, when given, gets each option whose value is the script's
// (ScriptOption), once, in the order of first appearance.
void ApplyScript(const CLI::App& app, std::vector<std::string>& args, size_t index,
                 std::vector<std::string>* warnings,
                 std::vector<ScriptOption>* from_script = nullptr);

}  // namespace pinpoint::cli
