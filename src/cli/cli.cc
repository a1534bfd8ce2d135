#include "cli/cli.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstring>
#include <functional>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include "cli/advice.h"
#include "cli/cdi.h"
#include "cli/companions.h"
#include "cli/format.h"
#include "cli/option_checks.h"
#include "cli/queue_select.h"
#include "cli/report.h"
#include "cli/report_csv.h"
#include "cli/script_directives.h"
#include "cli/show_logs.h"
#include "cli/submit_command.h"
#include "cli/submit_request.h"
#include "cli/submit_sched.h"
#include "cli/time_range.h"
#include "cli/top.h"
#include "cli/update_args.h"
#include "cli/usage.h"
#include "common/clock.h"
#include "common/env_select.h"
#include "common/terminal.h"
#include "common/version.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/array_spec.h"
#include "pinpoint/client.h"
#include "pinpoint/escape.h"
#include "pinpoint/job.h"
#include "pinpoint/units.h"

namespace pinpoint::cli {

using nlohmann::json;

namespace {

struct Globals {
  std::string socket = DefaultSocketPath();
  bool json_output = false;
  std::ostream* err = &std::cerr;
};

// One request on a connection of its own: Send(g, &Client::Show, ShowRequest{id}).
template <typename Reply, typename... Args>
Result<Reply> Send(const Globals& g, Result<Reply> (Client::*op)(Args...),
                   const std::remove_cvref_t<Args>&... args) {
  auto client = Client::Connect(g.socket);
  if (!client.ok()) return client.status();
  return ((*client).*op)(args...);
}

// The per-job outcome of cancel, hold and release: "<done> job N" lines on `out`, one error line
// per failed job; exit code of the first failure. --json: the results array.
// A failure of a task typed as ARRAY_INDEX is named as typed: "pinpoint: 4_20: job 27 already
// ended".
int PrintResults(const Globals& g, std::ostream& out, const std::vector<CancelResult>& results,
                 const char* done, const std::map<JobId, std::string>& task_names) {
  if (g.json_output)
    out << ToJson(CancelReply{results})["results"].dump(2) << "\n";  // the API's form
  Status worst;
  for (const auto& r : results) {
    if (r.status.ok()) {
      if (g.json_output) continue;
      if (r.array_tasks > 0) {
        out << done << " array " << r.id << " (" << r.array_tasks << " unfinished task"
            << (r.array_tasks == 1 ? "" : "s") << ")\n";
      } else {
        out << done << " job " << r.id << "\n";
      }
    } else {
      if (worst.ok()) worst = r.status;
      auto typed = task_names.find(r.id);
      if (!g.json_output)
        *g.err << "pinpoint: " << (typed == task_names.end() ? "" : typed->second + ": ")
               << EscapeForTerminal(r.status.message()) << "\n";
    }
  }
  return ExitCodeFor(worst);
}

// What the subcommands' options are parsed into, shared by the entries of kCommands.
struct CommandArgs {
  SubmitArgs submit;
  std::string shown;
  std::vector<std::string> tasks;
  std::string user;
  int limit = 0;
  LogsArgs logs;
  ReportArgs report;
  TopArgs top;
  CdiArgs cdi;
  UpdateArgs update;
  QueueArgs queue;
};

// One subcommand, as ninja's `struct Tool`: its name, help, how to add its options, and what it
// does. Plain data: kCommands is their table.
struct Command {
  const char* name;
  const char* help;
  void (*setup)(CLI::App*, CommandArgs&);
  Result<int> (*run)(const Globals&, CommandArgs&, std::ostream&);
};

void NoOptions(CLI::App*, CommandArgs&) {}

// The job ids or tasks a command takes; `what` is their help.
void AddTaskOptions(CLI::App* c, CommandArgs& a, const char* what) {
  c->add_option("jobs", a.tasks, what)->required()->type_name(kJobOrTaskType);
}

constexpr const char* kTasksHelp =
    "job ids, array ids, or tasks as ARRAY_INDEX (12_3) or ARRAY_[LIST]";

void SubmitOptions(CLI::App* c, CommandArgs& a) { AddSubmitOptions(c, a.submit); }
Result<int> ToolSubmit(const Globals& g, CommandArgs& a, std::ostream& out) {
  return RunSubmit(g.socket, g.json_output, a.submit, out, *g.err);
}

void QueueOptions(CLI::App* c, CommandArgs& a) { AddQueueOptions(c, a.queue); }
Result<int> ToolQueue(const Globals& g, CommandArgs& a, std::ostream& out) {
  return RunQueue(g.socket, g.json_output, a.queue, out, *g.err);
}

void ShowOptions(CLI::App* c, CommandArgs& a) {
  c->add_option("job", a.shown, "job id, or tasks as ARRAY_INDEX (12_3) or ARRAY_[LIST] (12_[1-3])")
      ->required()
      ->type_name(kJobOrTaskType);
}
Result<int> ToolShow(const Globals& g, CommandArgs& a, std::ostream& out) {
  return RunShow(g.socket, g.json_output, a.shown, out);
}

void CancelOptions(CLI::App* c, CommandArgs& a) {
  c->add_option("jobs", a.tasks, "job ids, array ids, or tasks as ARRAY_INDEX (12_3)")
      ->type_name(kJobOrTaskType);
  AddSelectionOptions(c, a.queue.select, /*with_jobs=*/false);
}
Result<int> ToolCancel(const Globals& g, CommandArgs& a, std::ostream& out) {
  auto client = Client::Connect(g.socket);
  if (!client.ok()) return client.status();
  auto selected = SelectForCancel(*client, a.tasks, a.queue.select);
  if (!selected.ok()) return selected.status();
  if (selected->ids.empty() && selected->arrays.empty()) {
    out << "cancelled no job: none matches\n";
    return 0;
  }
  auto reply = client->Cancel(CancelRequest{selected->ids, selected->arrays});
  if (!reply.ok()) return reply.status();
  return PrintResults(g, out, reply->results, "cancelled", selected->task_names);
}

void TasksOptions(CLI::App* c, CommandArgs& a) { AddTaskOptions(c, a, kTasksHelp); }

// hold and release: the tasks' ids, then `op` on them; "<done> job N" lines.
template <typename Request, typename Reply>
Result<int> OnTasks(const Globals& g, CommandArgs& a, std::ostream& out,
                    Result<Reply> (Client::*op)(const Request&), const char* done) {
  auto client = Client::Connect(g.socket);
  if (!client.ok()) return client.status();
  auto selected = SelectJobs(*client, a.tasks);
  if (!selected.ok()) return selected.status();
  auto reply = ((*client).*op)(Request{selected->ids, selected->arrays});
  if (!reply.ok()) return reply.status();
  return PrintResults(g, out, reply->results, done, selected->task_names);
}
Result<int> ToolHold(const Globals& g, CommandArgs& a, std::ostream& out) {
  return OnTasks(g, a, out, &Client::Hold, "held");
}
Result<int> ToolRelease(const Globals& g, CommandArgs& a, std::ostream& out) {
  return OnTasks(g, a, out, &Client::Release, "released");
}
Result<int> ToolSuspend(const Globals& g, CommandArgs& a, std::ostream& out) {
  return OnTasks(g, a, out, &Client::Suspend, "suspending");
}
Result<int> ToolResume(const Globals& g, CommandArgs& a, std::ostream& out) {
  return OnTasks(g, a, out, &Client::Resume, "resuming");
}

void UpdateOptions(CLI::App* c, CommandArgs& a) {
  AddTaskOptions(c, a, kTasksHelp);
  AddUpdateOptions(c, a.update);
}
Result<int> ToolUpdate(const Globals& g, CommandArgs& a, std::ostream& out) {
  auto edit = BuildEdit(a.update);
  if (!edit.ok()) return edit.status();
  auto client = Client::Connect(g.socket);
  if (!client.ok()) return client.status();
  auto selected = SelectJobs(*client, a.tasks);
  if (!selected.ok()) return selected.status();
  auto reply = client->Update(UpdateRequest{selected->ids, selected->arrays, *edit});
  if (!reply.ok()) return reply.status();
  return PrintResults(g, out, reply->results, "updated", selected->task_names);
}

Result<int> ToolGpus(const Globals& g, CommandArgs&, std::ostream& out) {
  auto reply = Send(g, &Client::Gpus);
  if (!reply.ok()) return reply.status();
  if (g.json_output)
    out << ToJson(*reply).dump(2) << "\n";
  else
    out << FormatGpus(*reply);
  return 0;
}

Result<int> ToolQos(const Globals& g, CommandArgs&, std::ostream& out) {
  auto reply = Send(g, &Client::Qos);
  if (!reply.ok()) return reply.status();
  out << (g.json_output ? ToJson(*reply).dump(2) + "\n" : FormatQos(*reply));
  return 0;
}

void WaitOptions(CLI::App* c, CommandArgs& a) {
  AddTaskOptions(c, a,
                 "job ids (an array's id waits for all its tasks), or tasks as ARRAY_INDEX "
                 "or ARRAY_[LIST]");
}
Result<int> ToolWait(const Globals& g, CommandArgs& a, std::ostream& out) {
  return RunWait(g.socket, a.tasks, g.json_output, out);
}

void LogsOptions(CLI::App* c, CommandArgs& a) {
  c->add_option("job", a.logs.job, "job id, or a task as ARRAY_INDEX (12_3)")
      ->required()
      ->type_name(kJobOrTaskType);
  c->add_flag("--stderr", a.logs.stderr_stream, "the error stream instead of stdout");
  c->add_flag("-f,--follow", a.logs.follow,
              "then print new output as it comes, until the job ends (or Ctrl-C)");
  c->add_option("--tail", a.logs.tail_lines, "only the last N lines (of the last 256 KiB)")
      ->check(CountIn(1, kLogsMaxTailLines));
}
Result<int> ToolLogs(const Globals& g, CommandArgs& a, std::ostream& out) {
  return RunLogs(g.socket, g.json_output, a.logs, out);
}

void ReportOptions(CLI::App* c, CommandArgs& a) {
  c->add_option("-u,--user", a.user, "only this user's jobs");
  c->add_option("-n,--limit", a.limit, "the newest this many jobs (default 10000)")
      ->check(CountIn(0, 1000000));
  c->add_option("--since", a.report.since,
                "jobs that ended at or after: YYYY-MM-DD[THH:MM] (local time), or 7d, 24h ago");
  c->add_option("--until", a.report.until, "jobs that ended before: as --since");
  c->add_flag("--csv", a.report.csv,
              "CSV (RFC 4180) with a header line: one row per user and the total");
  c->add_flag("--jobs", a.report.jobs, "with --csv: one row per job instead");
}
Result<int> ToolReport(const Globals& g, CommandArgs& a, std::ostream& out) {
  return RunReport(g.socket, g.json_output, a.report, a.user, a.limit, out);
}

void CdiOptions(CLI::App* c, CommandArgs& a) {
  c->add_option("--gpus", a.cdi.gpus, "whole GPUs, or with --gpu-mem the number of slices")
      ->check(CountIn(1, 1024));
  c->add_option("--gpu-mem", a.cdi.gpu_mem,
                "device memory of the slice, context included (e.g. 5G)");
  c->add_option("--gpu-share", a.cdi.gpu_share, "SM share of the slice (e.g. 20%)");
  c->add_option("--user", a.cdi.user,
                "the lease's user, whose MPS server the container reaches (root only)");
  c->add_option("--name", a.cdi.name, "a name for people");
  c->add_option("--time", a.cdi.time,
                "how long the lease holds its slice, as submit --time (default: the "
                "node's default_time_limit); its container is stopped then");
  c->add_option("--cdi-dir", a.cdi.cdi_dir, "where the spec goes (default /var/run/cdi)");
}
Result<int> ToolCdi(const Globals& g, CommandArgs& a, std::ostream& out) {
  return RunCdi(g.socket, g.json_output, a.cdi, out);
}

void TopOptions(CLI::App* c, CommandArgs& a) {
  c->add_option("-i,--interval", a.top.interval_s, "seconds between refreshes")
      ->check(DecimalIn(0.1, 3600.0));
  c->add_option("-c,--count", a.top.count, "stop after this many frames (0: never)")
      ->check(CountIn(0, 1000000));
}
Result<int> ToolTop(const Globals& g, CommandArgs& a, std::ostream& out) {
  return RunTop(g.socket, g.json_output, a.top, out);
}

Result<int> ToolVersion(const Globals& g, CommandArgs&, std::ostream& out) {
  auto reply = Send(g, &Client::Version);
  if (g.json_output) {
    json j{{"client", VersionText()}};
    if (reply.ok()) j["daemon"] = WithOk(ToJson(*reply));
    out << j.dump(2) << "\n";
  } else {
    out << "pinpoint " << VersionText() << "\n";
    if (reply.ok())
      out << "pinpointd " << EscapeForTerminal(reply->version) << " (backend "
          << EscapeForTerminal(reply->backend) << ", store schema " << reply->schema << ")\n";
  }
  if (!reply.ok()) return reply.status();
  return 0;
}

// The subcommands, in the order of the help.
constexpr Command kCommands[] = {
    {"submit",
     "Submit a job: pinpoint submit [--gpus N] [--gpu-mem SIZE [--gpu-share PCT]] -- CMD...",
     SubmitOptions, ToolSubmit},
    {"queue",
     "List pending and running jobs (--all: also ended ones), one page at a time; select with "
     "--user, --name, --state, --jobs",
     QueueOptions, ToolQueue},
    {"show", "Show a job with its history (ARRAY_INDEX: a task; ARRAY_[LIST]: those tasks)",
     ShowOptions, ToolShow},
    {"cancel",
     "Cancel jobs (your own; root: any); an array's id cancels its tasks, ARRAY_INDEX one task; "
     "or select with --user, --name, --state",
     CancelOptions, ToolCancel},
    {"hold",
     "Hold pending jobs: they do not start until released (root's hold: only root releases); an "
     "array's id holds its pending tasks",
     TasksOptions, ToolHold},
    {"release",
     "Release held jobs: they are scheduled again; an array's id releases its pending tasks",
     TasksOptions, ToolRelease},
    {"suspend",
     "Suspend running jobs (root): their device memory to host memory, their GPUs free for "
     "others, their processes stopped; not an MPS client",
     TasksOptions, ToolSuspend},
    {"resume", "Resume suspended jobs (root) on the same GPUs, once those have room", TasksOptions,
     ToolResume},
    {"update",
     "Change pending jobs without losing their place (running: the time limit); an array's id "
     "changes its pending tasks",
     UpdateOptions, ToolUpdate},
    {"gpus", "Show the node's devices, their slices and jobs", NoOptions, ToolGpus},
    {"qos", "List the node's service classes (Slurm's QOS), for submit --qos", NoOptions, ToolQos},
    {"wait", "Wait until jobs end; exit 0 when all completed, 1 otherwise", WaitOptions, ToolWait},
    {"logs", "Print a job's output (--stderr for its error stream, -f to follow it)", LogsOptions,
     ToolLogs},
    {"report", "Summarise ended jobs: device memory asked vs used, whole-GPU use, energy, per user",
     ReportOptions, ToolReport},
    {"cdi",
     "Open a lease on a slice for a container and write its CDI spec: pinpoint cdi [--gpu-mem "
     "SIZE [--gpu-share PCT]] [--time LIMIT] [--user U]",
     CdiOptions, ToolCdi},
    {"top", "Live view of the GPUs and the jobs on them (q or Ctrl-C to leave)", TopOptions,
     ToolTop},
    {"version", "Print the client's and the daemon's version", NoOptions, ToolVersion},
};

}  // namespace

namespace {

// The subcommand CLI11 was parsing, or null.
const CLI::App* ParsedSub(const std::vector<std::pair<CLI::App*, const Command*>>& subs) {
  for (const auto& [sub, c] : subs)
    if (sub->parsed()) return sub;
  return nullptr;
}

// Parses `words` (arranged, for `where`: "pinpoint SUBCOMMAND") into `app`. Returns what RunCli
// returns when nothing is to run: 0 after --help or --version (printed on `out`), 2 after one
// error line on `err`; nullopt when a subcommand was parsed and is to run.
std::optional<int> Parse(CLI::App& app, std::vector<std::string> words, const std::string& where,
                         bool no_subcommand,
                         const std::vector<std::pair<CLI::App*, const Command*>>& subs,
                         const SubmitArgs& submit, std::ostream& out, std::ostream& err) {
  try {
    std::reverse(words.begin(), words.end());  // CLI11 takes them last first
    app.parse(words);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return 0;
  } catch (const CLI::CallForVersion&) {
    out << app.version() << "\n";
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const UsageError& e) {
    err << where << ": " << e.what() << "\n";
    return 2;
  } catch (const CLI::RequiredError& e) {
    if (no_subcommand) {
      err << "pinpoint: a command is required (see pinpoint --help)\n";
      return 2;
    }
    err << where << ": " << ParseErrorText(e, ParsedSub(subs)) << " (see " << where << " --help)\n";
    return 2;
  } catch (const CLI::ParseError& e) {
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && !submit.command.empty() &&
        LooksLikeASizeUnit(submit.command.front())) {
      err << where << ": a size is one word: write 4GB, not 4 GB ('"
          << EscapeForTerminal(submit.command.front())
          << "' was read as the command, which goes after --)\n";
      return 2;
    }
    if (e.get_exit_code() == 0) {  // --help on a subcommand
      for (auto& [sub, c] : subs) {
        if (sub->parsed()) {
          out << sub->help();
          return 0;
        }
      }
      out << app.help();
      return 0;
    }
    err << where << ": " << ParseErrorText(e, ParsedSub(subs)) << " (see " << where << " --help)\n";
    return 2;
  }
  return std::nullopt;
}

// A subcommand whose words pinpoint does not parse: `completion`, or a program beside pinpoint
// (kCompanions), run in its place. Nullopt when `arranged` names neither.
std::optional<int> RunOpaque(const CLI::App& app, const ArrangedArgs& arranged, int argc,
                             char** argv, std::ostream& out, std::ostream& err) {
  const std::string& name = arranged.subcommand;
  int at = static_cast<int>(arranged.index) + 1;
  if (name == "completion")
    return PrintCompletion(app, at + 1 < argc ? argv[at + 1] : "", out, err);
  // A --socket before the companion's name reaches it as PINPOINT_SOCKET.
  std::string socket;
  for (size_t i = 0; i + 1 < arranged.index; ++i)
    if (arranged.args[i] == "--socket") socket = arranged.args[i + 1];
  for (const auto& c : kCompanions)
    if (name == c.name) return ExecCompanion(c.program, argc, argv, at, socket, err);
  return std::nullopt;
}

// Runs the subcommand the words chose: its exit code, or its error as one line.
int RunParsed(const std::vector<std::pair<CLI::App*, const Command*>>& subs, Globals& g,
              CommandArgs& args, std::ostream& out, std::ostream& err) {
  for (const auto& [sub, c] : subs) {
    if (!sub->parsed()) continue;
    auto code = c->run(g, args, out);
    if (!code.ok()) {
      err << "pinpoint: " << EscapeForTerminal(code.status().message()) << "\n";
      return ExitCodeFor(code.status());
    }
    return *code;
  }
  return 2;
}

}  // namespace

int RunCli(int argc, char** argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"pinpoint: exactly the GPU slice each job asks for", "pinpoint"};
  app.require_subcommand(1);
  Globals g;
  g.err = &err;
  app.add_option("--socket", g.socket,
                 "pinpointd's socket (default $PINPOINT_SOCKET or /run/pinpoint/pinpointd.sock)");
  app.add_flag("--json", g.json_output, "machine-readable output");
  app.set_version_flag("--version", std::string("pinpoint ") + VersionText(),
                       "print pinpoint's version and exit");
  app.footer(
      "Global options may also come after the subcommand, before --. `pinpoint SUBCOMMAND --help`: "
      "its options.");
  CommandArgs args;
  SubmitArgs& submit = args.submit;
  std::vector<std::pair<CLI::App*, const Command*>> subs;
  for (const Command& c : kCommands) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    c.setup(sub, args);
    subs.emplace_back(sub, &c);
  }
  // Options after the command belong to it: `submit -- python train.py --lr 1`.
  app.get_subcommand("submit")->prefix_command(false);
  app.allow_extras(false);
  CheckJobIds(app);
  std::set<std::string> opaque = {"completion"};
  for (const auto& c : kCompanions) {
    app.add_subcommand(c.name, c.help)
        ->group("Programs beside pinpoint (their own options: pinpoint NAME --help)");
    opaque.insert(c.name);
  }

  auto arranged = ArrangeArgs(app, std::vector<std::string>(argv + 1, argv + argc), opaque);
  if (!arranged.ok()) {
    err << arranged.status().message() << "\n";
    return 2;
  }
  if (arranged->opaque)
    if (std::optional<int> done = RunOpaque(app, *arranged, argc, argv, out, err)) return *done;
  std::string where =
      arranged->subcommand.empty() ? "pinpoint" : "pinpoint " + arranged->subcommand;
  std::vector<std::string> words = arranged->args;
  if (arranged->subcommand == "submit") {
    // A job script's #SBATCH and #PINPOINT lines, as sbatch reads them (script_directives.h).
    std::vector<std::string> warnings;
    std::vector<ScriptOption> from_script;
    ApplyScript(app, words, arranged->index, &warnings, &from_script);
    submit.from_script = ScriptFieldsOf(from_script);
    for (const ScriptOption& o : from_script) {
      for (const std::string& l : o.option->get_lnames())
        submit.script_places.emplace_back("--" + l, o.place);
      for (const std::string& n : o.option->get_snames())
        submit.script_places.emplace_back("-" + n, o.place);
    }
    for (const std::string& w : warnings) err << w << "\n";
  }
  if (std::optional<int> done =
          Parse(app, std::move(words), where, arranged->subcommand.empty(), subs, submit, out, err))
    return *done;
  return RunParsed(subs, g, args, out, err);
}

}  // namespace pinpoint::cli
