// The command line's front door, for every subcommand alike (those added later included): what a
// mistyped option or command is told, where global options may go, what a job id must look like.
// Built from the CLI11 definition of the options, so a new option or subcommand needs nothing here.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "cli/submit_sched.h"
#include "pinpoint/status.h"

namespace pinpoint::cli {

// A mistake on the command line found while CLI11 parses (a validator's verdict): RunCli prints
// "pinpoint SUBCOMMAND: <what()>" and exits 2. Thrown through CLI11, which lets it pass.
class UsageError : public CLI::ParseError {
 public:
  explicit UsageError(std::string message)
      : CLI::ParseError(std::move(message), CLI::ExitCodes::ValidationError) {}
};

// Of `known`, the name closest to `typed` by edit distance (a swap of two neighbours counts one),
// when it is close enough to be the one meant: at most a third of the typed name, never the whole
// of it, or a name that the typed one (2 letters or more) begins. Leading dashes are not counted.
// A name is never offered when it begins with another letter than the typed one (`--gpus-per-task`
// is not `--cpus-per-task`, `requeue` not `queue`), or when it is the typed name with a negation
// ("no-", "not-") added or taken away: the opposite of what was typed. "" when none is close.
// Ties: the first in `known`.
std::string Nearest(const std::string& typed, const std::vector<std::string>& known);

// "-x", "--name", "--name=value", "-n5": an option. "-", "-1", "-0.5": values.
bool LooksLikeOption(const std::string& token);
// The option of `app` that `token` names (a long name up to '=', or a short one by its first
// letter), or nullptr.
const CLI::Option* FindOption(const CLI::App& app, const std::string& token);
// The one option of `app` whose long name begins with `token`'s ("--out=x": --output), as sbatch
// takes unambiguous abbreviations; nullptr when none or more than one does, or for a short one.
const CLI::Option* FindByPrefix(const CLI::App& app, const std::string& token);
// How many words after `token` are its option's value: one for an option that takes a value and
// was not given it in the same word (--name=x, -n5).
size_t ValueWords(const CLI::Option& option, const std::string& token);

// The command line as CLI11 gets it, and what it was found to name.
struct ArrangedArgs {
  std::vector<std::string> args;  // without the program name
  std::string subcommand;         // "" when none was given
  bool opaque = false;            // a subcommand in `opaque`: args[index + 1 ...] are its own
  size_t index = 0;               // where the subcommand is in args (when there is one)
};

// Checks `args` (argv without the program name) against `app`'s options and subcommands, and
// moves the global options (`app`'s own) that were given after the subcommand to before it, so
// that they are accepted anywhere before `--`. Everything after the first `--` that follows the
// subcommand is a job's command and is neither read nor moved. A subcommand named in `opaque`
// (a companion program) is not examined past its name: what follows is its own.
// Errors: kInvalidArgument whose message is the whole line to print, naming the option or
// subcommand not known and the nearest known one ("pinpoint submit: unknown option --gpu-memory
// (did you mean --gpu-mem?)", "pinpoint: unknown command 'queu' (did you mean queue?)").
Result<ArrangedArgs> ArrangeArgs(const CLI::App& app, const std::vector<std::string>& args,
                                 const std::set<std::string>& opaque);

// The type name of a "jobs" positional that also takes a job array's task as ARRAY_INDEX (12_3).
inline constexpr char kJobOrTaskType[] = "JOB|ARRAY_INDEX|ARRAY_[LIST]";

// Every positional option named "job" or "jobs" of `app`'s subcommands gets the job id check: a
// whole number from 1, else UsageError("'0' is not a job id (job ids are whole numbers from 1)").
// One phrasing for every subcommand that takes job ids. An option whose type name is
// kJobOrTaskType also takes ID_INDEX (a task index from 0 after the array's id) and ID_[LIST]
// (ParseJobSelector).
void CheckJobIds(CLI::App& app);

// Adds to `submit`, hidden from its help and completion, Slurm's options that mean nothing on a
// pinpoint node (-p/--partition, --gres): given, each is refused with a UsageError naming what to
// use instead ("--gres has no meaning on a pinpoint node: ask for whole GPUs with --gpus N, ...").
void RefuseSlurmOnly(CLI::App* submit);
// submit's scheduling options (cli/submit_sched.h): --time, --after, --afterok, --dependency,
// --signal, into `sched`.
void AddSchedOptions(CLI::App* submit, SubmitSchedArgs& sched);

// A whole number in [lo, hi], for counts: "'abc' is not a whole number (0 to 1024)", "2000 is out
// of range (0 to 1024)" (CLI::Range alone answers "Value abc not in range").
CLI::Validator CountIn(int64_t lo, int64_t hi);
// A decimal number in [lo, hi] ("0 is out of range (0.1 to 3600)"), for --interval and the like.
CLI::Validator DecimalIn(double lo, double hi);
// The line for a CLI11 parse error of `sub` (the subcommand parsed, or null), in the user's words:
// a missing positional named ("missing a job id"), an unexpected word quoted ("unexpected
// argument '2'"); other messages as they are.
std::string ParseErrorText(const CLI::ParseError& e, const CLI::App* sub);

}  // namespace pinpoint::cli
