#include "cli/usage.h"

#include <algorithm>
#include <exception>

#include "cli/job_arrays.h"
#include "cli/option_checks.h"
#include "pinpoint/escape.h"

namespace pinpoint::cli {

namespace {

std::string StripDashes(const std::string& name) {
  return name.substr(std::min(name.find_first_not_of('-'), name.size()));
}

// Optimal string alignment distance: insertions, deletions, substitutions, adjacent swaps.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

std::vector<std::string> OptionNames(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* o : app.get_options()) {
    if (!o->nonpositional() || o->get_group().empty()) continue;  // hidden ones are not offered
    for (const auto& l : o->get_lnames()) out.push_back("--" + l);
    for (const auto& s : o->get_snames()) out.push_back("-" + s);
  }
  return out;
}

// A subcommand's positional that takes every remaining word: the job's command of `submit`.
bool TakesACommand(const CLI::App& sub) {
  for (const CLI::Option* o : sub.get_options()) {
    if (o->get_positional() && o->get_name() == "command") return true;
  }
  return false;
}

Status UnknownOption(const std::string& where, const std::string& token,
                     const std::vector<std::string>& known, bool after_command) {
  std::string name = token.substr(0, token.find('='));
  std::string line = where + ": unknown option " + EscapeForTerminal(name);
  std::string nearest = Nearest(name, known);
  if (!nearest.empty())
    line += " (did you mean " + nearest + "?)";
  else
    line += " (see " + where + " --help)";
  if (after_command) line += "; the job's command and its options go after --";
  return InvalidArgument(line);
}

}  // namespace

// "-x", "--name", "--name=value", "-n5": an option. "-", "-1", "-0.5": values.
bool LooksLikeOption(const std::string& token) {
  return token.size() >= 2 && token[0] == '-' &&
         !std::isdigit(static_cast<unsigned char>(token[1])) && token[1] != '.';
}

// The option of `app` that `token` names (a long name up to '=', or a short one by its first
// letter), or nullptr.
const CLI::Option* FindOption(const CLI::App& app, const std::string& token) {
  bool is_long = token.rfind("--", 0) == 0;
  std::string name = is_long ? token.substr(2, token.find('=') - 2) : token.substr(1, 1);
  for (const CLI::Option* o : app.get_options()) {
    if (!o->nonpositional()) continue;
    const auto& names = is_long ? o->get_lnames() : o->get_snames();
    if (std::find(names.begin(), names.end(), name) != names.end()) return o;
  }
  return nullptr;
}

// How many words after `token` are its option's value: one for an option that takes a value and
// was not given it in the same word (--name=x, -n5).
const CLI::Option* FindByPrefix(const CLI::App& app, const std::string& token) {
  if (token.rfind("--", 0) != 0) return nullptr;
  std::string name = token.substr(2, token.find('=') - 2);
  if (name.size() < 2) return nullptr;
  const CLI::Option* found = nullptr;
  for (const CLI::Option* o : app.get_options()) {
    if (!o->nonpositional()) continue;
    for (const std::string& l : o->get_lnames()) {
      if (l.rfind(name, 0) != 0) continue;
      if (found != nullptr && found != o) return nullptr;  // ambiguous
      found = o;
    }
  }
  return found;
}

size_t ValueWords(const CLI::Option& option, const std::string& token) {
  if (option.get_items_expected_max() <= 0) return 0;
  bool is_long = token.rfind("--", 0) == 0;
  bool attached = is_long ? token.find('=') != std::string::npos : token.size() > 2;
  return attached ? 0 : 1;
}

std::string Nearest(const std::string& typed, const std::vector<std::string>& known) {
  std::string bare = StripDashes(typed);
  size_t limit = std::min(std::max<size_t>(1, bare.size() / 3), bare.empty() ? 0 : bare.size() - 1);
  std::string best;
  size_t best_distance = limit + 1;
  auto negation_of = [](const std::string& a, const std::string& b) {
    for (const char* no : {"no-", "not-"})
      if (a == std::string(no) + b || b == std::string(no) + a) return true;
    return false;
  };
  for (const auto& name : known) {
    std::string candidate = StripDashes(name);
    if (bare.empty() || candidate.empty() || candidate[0] != bare[0] ||
        negation_of(bare, candidate))
      continue;
    size_t distance = EditDistance(bare, candidate);
    if (bare.size() >= 2 && candidate.rfind(bare, 0) == 0)
      distance = std::min(distance, limit);  // cut short
    if (distance < best_distance) best = name, best_distance = distance;
  }
  return best;
}

Result<ArrangedArgs> ArrangeArgs(const CLI::App& app, const std::vector<std::string>& args,
                                 const std::set<std::string>& opaque) {
  std::vector<std::string> globals_known = OptionNames(app);
  ArrangedArgs out;
  std::vector<std::string> globals;  // given before or after the subcommand: all go before it
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& token = args[i];
    if (token == "--" || !LooksLikeOption(token)) break;
    const CLI::Option* option = FindOption(app, token);
    if (option == nullptr) return UnknownOption("pinpoint", token, globals_known, false);
    globals.push_back(token);
    for (size_t v = ValueWords(*option, token); v > 0 && i + 1 < args.size(); --v)
      globals.push_back(args[++i]);
  }
  if (i == args.size() || args[i] == "--") {  // no subcommand: CLI11 says what is missing
    out.args = args;
    return out;
  }
  out.subcommand = args[i];
  if (opaque.count(out.subcommand) > 0) {
    out.args = args;
    out.opaque = true;
    out.index = i;
    return out;
  }
  const CLI::App* sub = nullptr;
  std::vector<std::string> commands;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (s->get_name() == out.subcommand) sub = s;
    if (!s->get_group().empty()) commands.push_back(s->get_name());  // hidden ones are not offered
  }
  if (sub == nullptr) {
    std::string line = "pinpoint: unknown command '" + EscapeForTerminal(out.subcommand) + "'";
    std::string nearest = Nearest(out.subcommand, commands);
    if (!nearest.empty()) return InvalidArgument(line + " (did you mean " + nearest + "?)");
    std::string list;
    for (const auto& c : commands) list += (list.empty() ? "" : ", ") + c;
    return InvalidArgument(line + " (commands: " + list + ")");
  }
  std::string where = "pinpoint " + out.subcommand;
  std::vector<std::string> known = OptionNames(*sub);
  known.insert(known.end(), globals_known.begin(), globals_known.end());
  std::vector<std::string> rest;
  bool positional_seen = false;
  for (++i; i < args.size(); ++i) {
    std::string token = args[i];
    if (token == "--") {
      rest.insert(rest.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    if (!LooksLikeOption(token) && TakesACommand(*sub)) {
      // As sbatch: the command's first word ends the options; every word after it is the
      // command's own, options included (`submit job.sh --epochs 1`).
      if (i + 1 < args.size() && args[i + 1] == "--" && LooksLikeASizeUnit(token))
        return InvalidArgument(where + ": a size is one word: write 4GB, not 4 GB ('" +
                               EscapeForTerminal(token) +
                               "' was read as the command, which goes after --)");
      if (i + 1 < args.size() && args[i + 1] == "--")
        return InvalidArgument(where + ": '--' after the command '" + EscapeForTerminal(token) +
                               "': the command goes after -- (" + where + " [OPTIONS] -- " +
                               EscapeForTerminal(token) + " ARGS...), or without -- at all");
      rest.push_back("--");
      rest.insert(rest.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    if (!LooksLikeOption(token)) {
      rest.push_back(token);
      positional_seen = true;
      continue;
    }
    // The subcommand's own option first: it may share a name with a global one. A long option
    // of a command that takes one may be cut short where that names one option (as sbatch's).
    std::vector<std::string>* into = &rest;
    const CLI::Option* option = FindOption(*sub, token);
    if (option == nullptr && TakesACommand(*sub) && (option = FindByPrefix(*sub, token)))
      token = "--" + option->get_lnames().front() +
              (token.find('=') != std::string::npos ? token.substr(token.find('=')) : "");
    if (option == nullptr && (option = FindOption(app, token)) != nullptr) into = &globals;
    if (option == nullptr)
      return UnknownOption(where, token, known, positional_seen && TakesACommand(*sub));
    into->push_back(token);
    for (size_t v = ValueWords(*option, token); v > 0 && i + 1 < args.size(); --v)
      into->push_back(args[++i]);
  }
  out.args = globals;
  out.index = globals.size();
  out.args.push_back(out.subcommand);
  out.args.insert(out.args.end(), rest.begin(), rest.end());
  return out;
}

void CheckJobIds(CLI::App& app) {
  auto check = [](bool tasks) {
    return CLI::Validator(
        [tasks](std::string& text) -> std::string {
          if (!(tasks ? ParseJobSelector(text).has_value() : IsJobId(text)))
            throw UsageError("'" + EscapeForTerminal(text) +
                             "' is not a job id (job ids are whole numbers from 1)");
          return "";
        },
        "");
  };
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    for (CLI::Option* o : sub->get_options([](CLI::Option* o) { return o->get_positional(); })) {
      if (o->get_name() == "job" || o->get_name() == "jobs")
        o->check(check(o->get_type_name() == kJobOrTaskType));
    }
  }
}

CLI::Validator CountIn(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        int64_t value = 0;
        size_t used = 0;
        try {
          value = std::stoll(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        std::string range = std::to_string(lo) + " to " + std::to_string(hi);
        if (used == 0 || used != text.size())
          return "'" + text + "' is not a whole number (" + range + ")";
        if (value < lo || value > hi) return text + " is out of range (" + range + ")";
        return "";
      },
      "INT in [" + std::to_string(lo) + " - " + std::to_string(hi) + "]");
}

CLI::Validator DecimalIn(double lo, double hi) {
  auto shown = [](double v) {
    std::string text = std::to_string(v);
    text.erase(text.find_last_not_of('0') + 1);
    if (!text.empty() && text.back() == '.') text.pop_back();
    return text;
  };
  return CLI::Validator(
      [lo, hi, shown](std::string& text) -> std::string {
        double value = 0;
        size_t used = 0;
        try {
          value = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        std::string range = shown(lo) + " to " + shown(hi);
        if (used == 0 || used != text.size())
          return "'" + text + "' is not a number (" + range + ")";
        if (!(value >= lo && value <= hi)) return text + " is out of range (" + range + ")";
        return "";
      },
      "NUMBER in [" + shown(lo) + " - " + shown(hi) + "]");
}

std::string ParseErrorText(const CLI::ParseError& e, const CLI::App* sub) {
  std::string what = e.what();
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && sub != nullptr) {
    for (const CLI::Option* o : sub->get_options()) {
      if (!o->get_required() || o->count() > 0) continue;
      const std::string& name = o->get_name();
      if (!o->get_positional()) return "missing " + name;
      if (name == "job") return "missing a job id";
      if (name == "jobs") return "missing the job ids";
      if (name == "command") return "missing the command to run (after --)";
      return "missing " + name;
    }
  }
  // "-n,--limit: 1 required TEXT missing": an option given last without its value.
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr &&
      what.find(" required ") != std::string::npos && what.ends_with(" missing")) {
    std::string names = what.substr(0, what.find(':'));
    const CLI::Option* o = sub != nullptr ? FindOption(*sub, names) : nullptr;
    if (o != nullptr && !o->get_snames().empty())
      names = "-" + o->get_snames().front() + "/" + names;
    return EscapeForTerminal(names) + " needs a value";
  }
  for (const char* extras : {"The following argument was not expected: ",
                             "The following arguments were not expected: "}) {
    if (what.rfind(extras, 0) == 0) {
      // CLI11 lists them last first: in the order typed.
      std::vector<std::string> words;
      std::string rest = what.substr(std::string(extras).size());
      for (size_t at = 0; at <= rest.size();) {
        size_t end = std::min(rest.find(' ', at), rest.size());
        words.insert(words.begin(), rest.substr(at, end - at));
        at = end + 1;
      }
      std::string typed;
      for (const std::string& w : words) typed += (typed.empty() ? "" : " ") + w;
      return std::string("unexpected argument") + (words.size() == 1 ? " '" : "s '") +
             EscapeForTerminal(typed) + "'";
    }
  }
  return EscapeForTerminal(what);
}

void AddSchedOptions(CLI::App* submit, SubmitSchedArgs& sched) {
  submit->add_option("-t,--time", sched.time,
                     "time limit: minutes, M:S, H:M:S, D-H, D-H:M, D-H:M:S, or 30s, 10m, 2h, 1d; "
                     "stopped when reached");
  submit->add_option("--after", sched.after, "start only after these jobs have ended (ID[,ID...])");
  submit->add_option("--afterok", sched.afterok,
                     "start only after these jobs have completed with exit 0; cancelled if one "
                     "does not (ID[,ID...])");
  submit->add_option(
      "-d,--dependency", sched.dependency,
      "Slurm's spelling of --afterok and --after: afterok:ID[:ID...][,afterany:ID...]");
  submit->add_option(
      "--signal", sched.signal,
      "[B:]SIG[@SECONDS]: send SIG that long (default 60 s) before the time limit, to checkpoint; "
      "B: to the command alone, not its children");
}

void RefuseSlurmOnly(CLI::App* submit) {
  struct Refused {
    const char* names;
    const char* shown;
    const char* instead;
  };
  static const Refused kRefused[] = {
      {"-p,--partition", "-p/--partition",
       "it has one queue; leave it out (on a Slurm cluster, sbatch -p chooses the node)"},
      {"--gres", "--gres",
       "ask for whole GPUs with --gpus N, or a slice with --gpu-mem SIZE [--gpu-share PCT]"},
  };
  for (const Refused& r : kRefused) {
    std::string message = std::string(r.shown) + " has no meaning on a pinpoint node: " + r.instead;
    submit->add_option(r.names, "Slurm's; refused with what to use instead")
        ->group("")
        ->check(CLI::Validator(
            [message](std::string&) -> std::string { throw UsageError(message); }, ""));
  }
}

}  // namespace pinpoint::cli
