#include "srun/srun_args.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>

#include "pinpoint/escape.h"

namespace pinpoint::srun {

namespace {

enum class Kind {
  kNtasks,
  kNodes,
  kCpus,
  kGpusPerTask,
  kGpus,
  kGres,
  kLabel,
  kChdir,
  kIgnored,
  kWarned
};

struct Flag {
  std::string_view short_name;  // "-n", or ""
  std::string_view long_name;   // "--ntasks", or ""
  bool has_value;
  Kind kind;
};

constexpr std::array kFlags = {
    Flag{"-n", "--ntasks", true, Kind::kNtasks},
    Flag{"", "--ntasks-per-node", true, Kind::kNtasks},
    Flag{"-N", "--nodes", true, Kind::kNodes},
    Flag{"-c", "--cpus-per-task", true, Kind::kCpus},
    Flag{"", "--gpus-per-task", true, Kind::kGpusPerTask},
    Flag{"-G", "--gpus", true, Kind::kGpus},
    Flag{"", "--gpus-per-node", true, Kind::kGpus},
    Flag{"", "--gres", true, Kind::kGres},
    Flag{"-l", "--label", false, Kind::kLabel},
    Flag{"-D", "--chdir", true, Kind::kChdir},
    Flag{"", "--mpi", true, Kind::kIgnored},
    Flag{"-u", "--unbuffered", false, Kind::kIgnored},
    Flag{"", "--cpu-bind", true, Kind::kIgnored},
    Flag{"", "--cpu_bind", true, Kind::kIgnored},
    Flag{"", "--gpu-bind", true, Kind::kIgnored},
    Flag{"-K", "--kill-on-bad-exit", false, Kind::kIgnored},
    Flag{"", "--exclusive", false, Kind::kIgnored},
    Flag{"", "--overlap", false, Kind::kIgnored},
    Flag{"", "--exact", false, Kind::kIgnored},
    Flag{"-p", "--partition", true, Kind::kIgnored},
    Flag{"-J", "--job-name", true, Kind::kIgnored},
    Flag{"-A", "--account", true, Kind::kIgnored},
    Flag{"-q", "--qos", true, Kind::kIgnored},
    Flag{"-t", "--time", true, Kind::kIgnored},
    Flag{"", "--mem", true, Kind::kIgnored},
    Flag{"", "--mem-per-cpu", true, Kind::kIgnored},
    Flag{"", "--mem-per-gpu", true, Kind::kIgnored},
    Flag{"", "--cpus-per-gpu", true, Kind::kIgnored},
    Flag{"", "--ntasks-per-gpu", true, Kind::kIgnored},
    Flag{"", "--hint", true, Kind::kIgnored},
    Flag{"-m", "--distribution", true, Kind::kIgnored},
    Flag{"", "--jobid", true, Kind::kIgnored},
    Flag{"-w", "--nodelist", true, Kind::kIgnored},
    Flag{"-Q", "--quiet", false, Kind::kIgnored},
    Flag{"-v", "--verbose", false, Kind::kIgnored},
    Flag{"-W", "--wait", true, Kind::kIgnored},
    Flag{"", "--propagate", false, Kind::kIgnored},
    Flag{"", "--accel-bind", true, Kind::kIgnored},
    Flag{"", "--export", true, Kind::kWarned},
    Flag{"-o", "--output", true, Kind::kWarned},
    Flag{"-e", "--error", true, Kind::kWarned},
    Flag{"-i", "--input", true, Kind::kWarned},
    Flag{"", "--cpu-freq", true, Kind::kWarned},
    Flag{"", "--signal", true, Kind::kWarned},
};

const Flag* FindFlag(std::string_view name, bool is_long) {
  for (const Flag& f : kFlags) {
    if ((is_long ? f.long_name : f.short_name) == name) return &f;
  }
  return nullptr;
}

// A count from 1 to `max`, or nullopt.
std::optional<int> Count(std::string_view text, int max) {
  if (text.empty() || text.size() > 7 || text.find_first_not_of("0123456789") != text.npos)
    return std::nullopt;
  int n = std::stoi(std::string(text));
  if (n < 1 || n > max) return std::nullopt;
  return n;
}

Status BadValue(std::string_view flag, const std::string& value, std::string_view what) {
  return InvalidArgument(std::string(flag) + ": '" + EscapeForTerminal(value) + "' is not " +
                         std::string(what));
}

// The GPUs of "gpu", "gpu:N" or "gpu:TYPE:N", or nullopt.
std::optional<int> GresGpus(const std::string& value) {
  if (value == "gpu") return 1;
  if (!value.starts_with("gpu:")) return std::nullopt;
  return Count(std::string_view(value).substr(value.rfind(':') + 1), 1024);
}

// The count of --gpus/--gpus-per-node, whose value may name a type ("v100:4").
std::optional<int> TypedCount(const std::string& value) {
  return Count(std::string_view(value).substr(value.rfind(':') + 1), 1024);
}

Status Apply(const Flag& f, std::string_view shown, const std::string& value, StepArgs& out) {
  switch (f.kind) {
    case Kind::kNtasks: {
      auto n = Count(value, 1 << 16);
      if (!n) return BadValue(shown, value, "a task count");
      out.ntasks = *n;
      return Status::Ok();
    }
    case Kind::kNodes: {
      std::string min = value.substr(0, value.find('-'));
      if (min != "1")
        return InvalidArgument(std::string(shown) + " " + EscapeForTerminal(value) +
                               ": a pinpoint job has one node; a step runs on it alone");
      return Status::Ok();
    }
    case Kind::kCpus: {
      auto n = Count(value, 1 << 16);
      if (!n) return BadValue(shown, value, "a CPU count");
      out.cpus_per_task = *n;
      return Status::Ok();
    }
    case Kind::kGpusPerTask:
    case Kind::kGpus: {
      auto n = TypedCount(value);
      if (!n) return BadValue(shown, value, "a GPU count");
      (f.kind == Kind::kGpus ? out.gpus : out.gpus_per_task) = *n;
      return Status::Ok();
    }
    case Kind::kGres: {
      auto n = GresGpus(value);
      if (!n)
        return InvalidArgument(std::string(shown) + "=" + EscapeForTerminal(value) +
                               ": pinpoint's srun knows only gpu:N (a step's GPUs of its job)");
      out.gpus = *n;
      return Status::Ok();
    }
    case Kind::kLabel:
      out.label = true;
      return Status::Ok();
    case Kind::kChdir:
      out.chdir = value;
      return Status::Ok();
    case Kind::kIgnored:
      return Status::Ok();
    case Kind::kWarned:
      if (f.long_name == "--export" && value == "ALL") return Status::Ok();
      out.warnings.push_back("srun: " + std::string(shown) + " " + EscapeForTerminal(value) +
                             " is not honoured by pinpoint's srun; ignored");
      return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace

Result<StepArgs> ParseStepArgs(const std::vector<std::string>& args) {
  StepArgs out;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") {
      ++i;
      break;
    }
    if (word.size() < 2 || word[0] != '-') break;  // the command
    bool is_long = word.starts_with("--");
    size_t eq = is_long ? word.find('=') : std::string::npos;
    std::string name = is_long ? word.substr(0, eq) : word.substr(0, 2);
    const Flag* f = FindFlag(name, is_long);
    if (f == nullptr)
      return InvalidArgument("srun: unknown option '" + EscapeForTerminal(word) +
                             "' (pinpoint's srun runs a step in its job: docs/cli.md)");
    std::string value;
    if (f->has_value) {
      if (is_long && eq != std::string::npos)
        value = word.substr(eq + 1);
      else if (!is_long && word.size() > 2)
        value = word.substr(word[2] == '=' ? 3 : 2);
      else if (i + 1 < args.size())
        value = args[++i];
      else
        return InvalidArgument("srun: " + name + " needs a value");
    } else if ((is_long && eq != std::string::npos) || (!is_long && word.size() > 2)) {
      if (f->kind != Kind::kIgnored) return InvalidArgument("srun: " + name + " takes no value");
    }
    PP_RETURN_IF_ERROR(Apply(*f, name, value, out));
  }
  out.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  if (out.command.empty()) return InvalidArgument("srun: no command to run");
  return out;
}

}  // namespace pinpoint::srun
