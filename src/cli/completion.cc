#include "cli/completion.h"

#include <CLI/CLI.hpp>
#include <functional>

namespace pinpoint::cli {

namespace {

// The tree flattened: one entry per command, keyed by its path ("." for the root, "slurm conf").
struct Flat {
  std::string path;
  const CompletionCommand* command;
};

void Flatten(const CompletionCommand& c, const std::string& path, std::vector<Flat>* out) {
  out->push_back({path, &c});
  for (const auto& sub : c.subcommands)
    Flatten(sub, path == "." ? sub.name : path + " " + sub.name, out);
}

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// `text` as a single-quoted shell word (bash and zsh alike).
std::string Quote(const std::string& text) {
  std::string out = "'";
  for (char ch : text) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

// The first line of a help text, with what would break a zsh "word:description" pair escaped.
std::string ZshDescription(const std::string& help) {
  std::string line = help.substr(0, help.find('\n'));
  std::string out;
  for (char ch : line) {
    if (ch == ':' || ch == '\\') out += '\\';
    out += ch;
  }
  return out;
}

struct Words {
  std::vector<std::string> subcommands, options, value_options;
};

Words WordsOf(const CompletionCommand& c) {
  Words w;
  for (const auto& sub : c.subcommands) w.subcommands.push_back(sub.name);
  for (const auto& o : c.options) {
    for (const auto& n : o.names) {
      w.options.push_back(n);
      if (o.takes_value) w.value_options.push_back(n);
    }
  }
  return w;
}

// The walk over the words typed so far, shared by both shells in spirit: subcommands descend,
// an option that takes a value skips the next word, after "--" comes the job's command line,
// completed as such (bash-completion's _command_offset where it is loaded, else command names).
constexpr char kBashBody[] = R"(
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} at=. i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if [[ $w == -- ]]; then  # the job's command: complete it as a command line of its own
      if declare -F _command_offset >/dev/null; then _command_offset $((i + 1)); return; fi
      if ((COMP_CWORD == i + 1)); then mapfile -t COMPREPLY < <(compgen -c -- "$cur"); return; fi
      compopt -o default 2>/dev/null; COMPREPLY=(); return
    fi
    if [[ " ${vals[$at]-} " == *" $w "* ]]; then ((i++)); continue; fi
    [[ $w == -* ]] && continue
    if [[ " ${subs[$at]-} " == *" $w "* ]]; then
      if [[ $at == . ]]; then at=$w; else at="$at $w"; fi
    fi
  done
  if [[ " ${vals[$at]-} " == *" $prev "* ]]; then
    compopt -o default 2>/dev/null; COMPREPLY=(); return
  fi
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "${opts[$at]-}" -- "$cur")
  elif [[ -n ${subs[$at]-} ]]; then
    mapfile -t COMPREPLY < <(compgen -W "${subs[$at]-}" -- "$cur")
  else
    compopt -o default 2>/dev/null; COMPREPLY=()
  fi
)";

constexpr char kZshBody[] = R"(
  local at=. i w cur=${words[CURRENT]} prev=${words[CURRENT-1]}
  for ((i = 2; i < CURRENT; i++)); do
    w=${words[i]}
    if [[ $w == -- ]]; then  # the job's command: complete it as a command line of its own
      words=("${(@)words[i+1,-1]}"); (( CURRENT -= i )); _normal; return
    fi
    if [[ " ${vals[$at]-} " == *" $w "* ]]; then ((i++)); continue; fi
    [[ $w == -* ]] && continue
    if [[ " ${subs[$at]-} " == *" $w "* ]]; then
      if [[ $at == . ]]; then at=$w; else at="$at $w"; fi
    fi
  done
  if [[ " ${vals[$at]-} " == *" $prev "* ]]; then _files; return; fi
  local -a items
  if [[ $cur == -* ]]; then
    items=(${(f)optdesc[$at]})
    _describe -t options option items
  elif [[ -n ${subs[$at]-} ]]; then
    items=(${(f)subdesc[$at]})
    _describe -t commands command items
  else
    _files
  fi
)";

}  // namespace

CompletionCommand DescribeApp(const CLI::App& app) {
  CompletionCommand c;
  c.name = app.get_name();
  c.help = app.get_description();
  for (const CLI::Option* o : app.get_options()) {
    if (!o->nonpositional() || o->get_group().empty()) continue;  // hidden ones are not offered
    CompletionOption option;
    for (const auto& s : o->get_snames()) option.names.push_back("-" + s);
    for (const auto& l : o->get_lnames()) option.names.push_back("--" + l);
    option.takes_value = o->get_items_expected_max() > 0;
    option.help = o->get_description();
    c.options.push_back(std::move(option));
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    c.subcommands.push_back(DescribeApp(*sub));
  }
  return c;
}

std::vector<CompletionCommand> CompanionCommands() {
  auto flag = [](const char* name, const char* help) {
    return CompletionOption{{name}, false, help};
  };
  auto value = [](const char* name, const char* help) {
    return CompletionOption{{name}, true, help};
  };
  CompletionOption help = flag("--help", "print the usage and exit");
  CompletionCommand bench{
      "bench",
      "Measure a workload: one job per GPU, time-slicing, pinpoint's MPS slices, bare MPS",
      {},
      {}};
  for (const char* name : {"-w",
                           "--workload",
                           "-n",
                           "--n",
                           "--n-for",
                           "-m",
                           "--modes",
                           "-r",
                           "--reps",
                           "--reps-at-1",
                           "-o",
                           "--out",
                           "--bin-dir",
                           "--gpu",
                           "--gpu-mem",
                           "--gpu-share",
                           "--cpus",
                           "--budget-s",
                           "--target-n",
                           "--sample-ms",
                           "--settle-ms",
                           "--scratch",
                           "--torch-script",
                           "--python",
                           "--backend",
                           "--mps-control",
                           "--cuda-version",
                           "--daemon-set"}) {
    bench.options.push_back(value(name, "see pinpoint bench --help"));
  }
  for (const char* name : {"--no-warmup", "--no-cgroups", "--pin", "--keep-scratch"})
    bench.options.push_back(flag(name, "see pinpoint bench --help"));
  bench.options.push_back(help);
  CompletionCommand slurm{
      "slurm",
      "Slurm integration: gres.conf, running a job as its slice, Prolog/Epilog, health check",
      {},
      {{"conf",
        "print gres.conf for this node",
        {value("--shard-size", "device memory of one shard (default 1G)"),
         value("--dev-dir", "where the GPU device files are"),
         value("--node", "the node's name in Slurm"),
         flag("--node-line", "print the slurm.conf lines instead")},
        {}},
       {"run",
        "run a job step as the slice Slurm allocated",
        {value("--shard-size", "device memory of one shard")},
        {}},
       {"prolog", "Slurm Prolog hook", {}, {}},
       {"epilog", "Slurm Epilog hook", {}, {}},
       {"health",
        "Slurm HealthCheckProgram: drains the node while pinpointd does not answer",
        {value("--node", "the node's name in Slurm")},
        {}}}};
  CompletionCommand htcondor{
      "htcondor",
      "HTCondor integration: the startd layout and the job wrapper",
      {},
      {{"conf",
        "print the startd configuration for this node",
        {value("--shares", "shares of each GPU (slots of a partitionable GPU slot)"),
         value("--whole-gpus", "GPUs kept whole"), value("--wrapper", "path of the job wrapper")},
        {}},
       {"wrapper", "run a job as HTCondor's USER_JOB_WRAPPER", {}, {}}}};
  return {bench, slurm, htcondor};
}

std::string BashCompletion(const CompletionCommand& root) {
  std::vector<Flat> flat;
  Flatten(root, ".", &flat);
  std::string fn = "_" + root.name + "_complete";
  std::string out = "# bash completion for " + root.name + ": generated by `" + root.name +
                    " completion bash` from its own command line (do not edit)\n";
  out += fn + "() {\n  local -A subs opts vals\n";
  for (const auto& f : flat) {
    Words w = WordsOf(*f.command);
    std::string key = Quote(f.path);
    if (!w.subcommands.empty()) out += "  subs[" + key + "]=" + Quote(Join(w.subcommands)) + "\n";
    if (!w.options.empty()) out += "  opts[" + key + "]=" + Quote(Join(w.options)) + "\n";
    if (!w.value_options.empty())
      out += "  vals[" + key + "]=" + Quote(Join(w.value_options)) + "\n";
  }
  out += kBashBody;
  out += "}\ncomplete -F " + fn + " " + root.name + "\n";
  return out;
}

std::string ZshCompletion(const CompletionCommand& root) {
  std::vector<Flat> flat;
  Flatten(root, ".", &flat);
  std::string out = "#compdef " + root.name + "\n# zsh completion for " + root.name +
                    ": generated by `" + root.name +
                    " completion zsh` from its own command line (do not edit)\n";
  out += "_" + root.name + "() {\n  local -A subs vals subdesc optdesc\n";
  for (const auto& f : flat) {
    const CompletionCommand& c = *f.command;
    Words w = WordsOf(c);
    std::string key = Quote(f.path);
    if (!w.subcommands.empty()) {
      out += "  subs[" + key + "]=" + Quote(Join(w.subcommands)) + "\n";
      std::string desc;
      for (const auto& sub : c.subcommands)
        desc += (desc.empty() ? "" : "\n") + sub.name + ":" + ZshDescription(sub.help);
      out += "  subdesc[" + key + "]=" + Quote(desc) + "\n";
    }
    if (!w.options.empty()) {
      std::string desc;
      for (const auto& o : c.options)
        for (const auto& n : o.names)
          desc += (desc.empty() ? "" : "\n") + n + ":" + ZshDescription(o.help);
      out += "  optdesc[" + key + "]=" + Quote(desc) + "\n";
    }
    if (!w.value_options.empty())
      out += "  vals[" + key + "]=" + Quote(Join(w.value_options)) + "\n";
  }
  out += kZshBody;
  out += "}\n_" + root.name + " \"$@\"\n";
  return out;
}

}  // namespace pinpoint::cli
