#include "cli/cli.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <algorithm>
#include <functional>
#include <set>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>

#include "cli/advice.h"
#include "cli/cdi.h"
#include "cli/completion.h"
#include "cli/format.h"
#include "cli/option_checks.h"
#include "cli/queue_select.h"
#include "cli/report.h"
#include "cli/script_directives.h"
#include "cli/submit_request.h"
#include "cli/submit_sched.h"
#include "cli/job_arrays.h"
#include "cli/submit_wait.h"
#include "cli/report_csv.h"
#include "cli/show_logs.h"
#include "cli/time_range.h"
#include "cli/top.h"
#include "cli/update_args.h"
#include "cli/usage.h"
#include "common/clock.h"
#include "common/companion.h"
#include "common/env_select.h"
#include "common/terminal.h"
#include "common/version.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/array_spec.h"
#include "pinpoint/client.h"
#include "pinpoint/escape.h"
#include "pinpoint/job.h"
#include "pinpoint/units.h"

extern char** environ;

namespace pinpoint::cli {

using nlohmann::json;

namespace {

struct Globals {
  std::string socket = DefaultSocketPath();
  bool json_output = false;
  std::ostream* err = &std::cerr;
};

// One subcommand: its name, help, how to add its options, and what it does.
struct Command {
  const char* name;
  const char* help;
  std::function<void(CLI::App*)> setup;
  std::function<Result<int>(const Globals&, std::ostream&)> run;
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

// How long a submit waits before its one retry: long enough for a restarting daemon to listen.
constexpr std::chrono::milliseconds kSubmitRetryDelay{1000};

// `pinpoint bench ...`, `pinpoint slurm ...` and `pinpoint htcondor ...` are pinpoint-bench,
// pinpoint-slurm and pinpoint-htcondor next to this binary or in <prefix>/libexec/pinpoint
// (common/companion.h; docs/benchmarks.md, docs/cluster.md), with the words after
// argv[command_arg]. They get PINPOINT_BIN (this binary) and, when --socket came before the
// command, PINPOINT_SOCKET.
int ExecCompanion(const std::string& name, int argc, char** argv, int command_arg,
                  const std::string& socket, std::ostream& err) {
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  std::string self = n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string();
  std::string path = CompanionPath(name);
  ::setenv("PINPOINT_BIN", self.c_str(), 1);
  if (!socket.empty()) ::setenv("PINPOINT_SOCKET", socket.c_str(), 1);
  std::vector<char*> args = {path.data()};
  for (int i = command_arg + 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  ::execv(path.c_str(), args.data());
  err << "pinpoint: cannot run " << path << ": " << std::strerror(errno) << " (install " << name
      << " next to pinpoint, or in libexec/pinpoint beside its bin/)\n";
  return 1;
}

// `pinpoint completion bash|zsh` (not listed in the help): the completion script from this very
// command line plus the companions' words (cli/completion.h); the build installs its output.
int PrintCompletion(const CLI::App& app, const std::string& shell, std::ostream& out,
                    std::ostream& err) {
  CompletionCommand root = DescribeApp(app);
  root.name = "pinpoint";
  for (auto& companion :
       CompanionCommands()) {  // in place of the help's entry, which has no options
    std::erase_if(root.subcommands,
                  [&](const CompletionCommand& c) { return c.name == companion.name; });
    root.subcommands.push_back(std::move(companion));
  }
  if (shell == "bash") out << BashCompletion(root);
  else if (shell == "zsh") out << ZshCompletion(root);
  else {
    err << "pinpoint: completion needs a shell: bash or zsh\n";
    return 2;
  }
  return 0;
}

std::vector<Command> Commands(SubmitArgs& submit, std::string& shown,
                              std::vector<std::string>& tasks, bool& all, std::string& user,
                              int& limit, int& offset, LogsArgs& logs, ReportArgs& report,
                              TopArgs& top, CdiArgs& cdi, UpdateArgs& update, QueueArgs& queue) {
  return {
      {"submit",
       "Submit a job: pinpoint submit [--gpus N] [--gpu-mem SIZE [--gpu-share PCT]] -- CMD...",
       [&](CLI::App* c) {
         // A script's directives come first and the command line after: the last value given wins.
         c->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
         c->add_option("--gpus", submit.gpus, "whole GPUs, or with --gpu-mem the number of slices")
             ->check(CountIn(0, 1024));
         c->add_option("--gpu-mem", submit.gpu_mem,
                       "device memory of a slice, context included (e.g. 4G, 512MiB)");
         c->add_option("--gpu-share", submit.gpu_share, "SM share of a slice (e.g. 20%)");
         c->add_option(
             "--mig", submit.mig,
             "a MIG instance of this profile (e.g. 1g.10gb); without --gpu-mem, all of its memory");
         c->add_option("--device", submit.devices,
                       "run on these devices: indices as `pinpoint gpus` lists them, one per GPU "
                       "(e.g. 1 or 0,2), as a batch system chose them");
         c->add_option("-c,--cpus,--cpus-per-task", submit.cpus, "host CPUs")
             ->check(CountIn(1, 65536));
         c->add_option("--mem", submit.mem, "host memory (e.g. 8G)");
         c->add_option("--priority", submit.priority, "higher runs first")
             ->check(CountIn(-1000000, 1000000));
         c->add_option("-J,--name,--job-name", submit.name, "a name for people");
         c->add_option("-D,--chdir", submit.chdir,
                       "run the job in this directory (default: the current one)");
         c->add_option("--as-user", submit.as_user, "run as this user (root only)");
         c->add_flag("--wait", submit.wait,
                     "wait for the job to end; exit with its exit code (Ctrl-C cancels the job)");
         c->add_flag("--parsable", submit.parsable,
                     "print the job's id alone (an array's id for --array), as sbatch --parsable: "
                     "jid=$(pinpoint submit --parsable ...)");
         c->add_option("--export", submit.export_env,
                       "environment: ALL (default, less names that look like secrets), NONE, or "
                       "NAME[,NAME=value...]");
         c->add_option("-o,--output", submit.output,
                       "write the job's stdout (and stderr, without -e) to this file; %j job id, "
                       "%u user, %x name, %A array id, %a task index");
         c->add_option("-e,--error", submit.error,
                       "write the job's stderr to this file; %j job id, %u user, %x name, %A array "
                       "id, %a task index");
         c->add_flag("--hold", submit.hold,
                     "queue the job held: it starts only after `pinpoint release`");
         c->add_flag("--requeue", submit.requeue,
                     "back to the queue, not failed, when the job is lost with its node or ended "
                     "by an MPS fault");
         AddSchedOptions(c, submit.sched);
         RefuseSlurmOnly(c);
         submit.array_option = c->add_option("--array", submit.array,
                                             "a job array: one job per index, e.g. 1-100, 0-15:4 "
                                             "or 1,3,5-7; %K runs at most K at once");
         c->add_option("command", submit.command, "the command and its arguments")
             ->required()
             ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
       },
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         std::vector<std::string> dropped;
         auto request = BuildRequest(submit, &dropped);
         if (!request.ok()) return request.status();
         PP_RETURN_IF_ERROR(CheckRunnable(*request));
         if (!dropped.empty()) {
           std::string names;
           for (const auto& n : dropped)
             names += (names.empty() ? "" : ", ") + EscapeForTerminal(n);
           *g.err << "pinpoint: not passed to the job (they look like secrets; docs/security.md): "
                  << names << "\n";
         }
         // With --wait the job is waited for here, not by the daemon's submit: its id comes at
         // once and Ctrl-C can cancel it (cli/submit_wait.h).
         SubmitRequest op{*request, false, std::nullopt, submit.hold, std::nullopt};
         if (submit.array_option->count() > 0) {
           auto spec = ParseArraySpec(submit.array);
           if (!spec.ok()) return spec.status();
           op.array = std::move(spec).value();
         }
         std::string key = IdempotencyKey();
         if (!key.empty()) op.idempotency_key = key;
         auto reply = Send(g, &Client::Submit, op);
         // The reply may be lost after the daemon stored the job; the same key makes the retry
         // find that job instead of running it twice.
         if (!reply.ok() && reply.status().code() == Code::kUnavailable && !key.empty()) {
           std::this_thread::sleep_for(kSubmitRetryDelay);
           reply = Send(g, &Client::Submit, op);
         }
         if (!reply.ok()) return reply.status();
         // --parsable: the id alone on stdout, at once (with --wait, before the wait, and nothing
         // after it: the exit code says how the job ended).
         if (submit.parsable && !g.json_output) {
           out << (reply->array ? reply->array->id : reply->job.id) << std::endl;
           if (!submit.wait) return 0;
         }
         std::ostringstream unused;
         std::ostream& shown = submit.parsable && !g.json_output ? unused : out;
         if (reply->array)
           return FinishArraySubmit(g.socket, *reply, submit.wait, submit.hold, g.json_output,
                                    shown, *g.err);
         const JobView& job = reply->job;
         if (!submit.wait) {
           if (g.json_output)
             out << ToJson(job).dump(2) << "\n";
           else
             out << "submitted job " << job.id << (submit.hold ? " (held)" : "") << "\n";
           return 0;
         }
         // Said once Ctrl-C is blocked: whoever reads it and presses Ctrl-C cancels the job.
         auto waited = WaitCancellingOnSignal(g.socket, job.id, *g.err,
                                              "pinpoint: submitted job " + std::to_string(job.id) +
                                                  ", waiting (Ctrl-C cancels it)");
         // A daemon restarting under the wait: once more, a second later, as the submit itself.
         if (!waited.ok() && waited.status().code() == Code::kUnavailable) {
           std::this_thread::sleep_for(kSubmitRetryDelay);
           waited = WaitCancellingOnSignal(g.socket, job.id, *g.err);
         }
         if (!waited.ok()) return waited.status();
         if (waited->job) {
           const JobView& ended = *waited->job;
           if (g.json_output)
             out << ToJson(ended).dump(2) << "\n";
           else
             shown << FormatJobEnd(ended);
         }
         return SubmitWaitExitCode(*waited);
       }},
      {"queue",
       "List pending and running jobs (--all: also ended ones), one page at a time; select with "
       "--user, --name, --state, --jobs",
       [&](CLI::App* c) { AddQueueOptions(c, queue); },
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         return RunQueue(g.socket, g.json_output, queue, out, *g.err);
       }},
      {"show", "Show a job with its history (ARRAY_INDEX: a task; ARRAY_[LIST]: those tasks)",
       [&](CLI::App* c) {
         c->add_option("job", shown,
                       "job id, or tasks as ARRAY_INDEX (12_3) or ARRAY_[LIST] (12_[1-3])")
             ->required()
             ->type_name(kJobOrTaskType);
       },
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         return RunShow(g.socket, g.json_output, shown, out);
       }},
      {"cancel",
       "Cancel jobs (your own; root: any); an array's id cancels its tasks, ARRAY_INDEX one task; "
       "or select with --user, --name, --state",
       [&](CLI::App* c) {
         c->add_option("jobs", tasks, "job ids, array ids, or tasks as ARRAY_INDEX (12_3)")
             ->type_name(kJobOrTaskType);
         AddSelectionOptions(c, queue.select, /*with_jobs=*/false);
       },
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         auto client = Client::Connect(g.socket);
         if (!client.ok()) return client.status();
         auto selected = SelectForCancel(*client, tasks, queue.select);
         if (!selected.ok()) return selected.status();
         if (selected->ids.empty() && selected->arrays.empty()) {
           out << "cancelled no job: none matches\n";
           return 0;
         }
         auto reply = client->Cancel(CancelRequest{selected->ids, selected->arrays});
         if (!reply.ok()) return reply.status();
         return PrintResults(g, out, reply->results, "cancelled", selected->task_names);
       }},
      {"hold",
       "Hold pending jobs: they do not start until released (root's hold: only root releases); an "
       "array's id holds its pending tasks",
       [&](CLI::App* c) {
         c->add_option("jobs", tasks,
                       "job ids, array ids, or tasks as ARRAY_INDEX (12_3) or ARRAY_[LIST]")
             ->required()
             ->type_name(kJobOrTaskType);
       },
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         auto client = Client::Connect(g.socket);
         if (!client.ok()) return client.status();
         auto selected = SelectJobs(*client, tasks);
         if (!selected.ok()) return selected.status();
         auto reply = client->Hold(HoldRequest{selected->ids, selected->arrays});
         if (!reply.ok()) return reply.status();
         return PrintResults(g, out, reply->results, "held", selected->task_names);
       }},
      {"release",
       "Release held jobs: they are scheduled again; an array's id releases its pending tasks",
       [&](CLI::App* c) {
         c->add_option("jobs", tasks,
                       "job ids, array ids, or tasks as ARRAY_INDEX (12_3) or ARRAY_[LIST]")
             ->required()
             ->type_name(kJobOrTaskType);
       },
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         auto client = Client::Connect(g.socket);
         if (!client.ok()) return client.status();
         auto selected = SelectJobs(*client, tasks);
         if (!selected.ok()) return selected.status();
         auto reply = client->Release(ReleaseRequest{selected->ids, selected->arrays});
         if (!reply.ok()) return reply.status();
         return PrintResults(g, out, reply->results, "released", selected->task_names);
       }},
      {"update",
       "Change pending jobs without losing their place (running: the time limit); an array's id "
       "changes its pending tasks",
       [&](CLI::App* c) {
         c->add_option("jobs", tasks,
                       "job ids, array ids, or tasks as ARRAY_INDEX (12_3) or ARRAY_[LIST]")
             ->required()
             ->type_name(kJobOrTaskType);
         AddUpdateOptions(c, update);
       },
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         auto edit = BuildEdit(update);
         if (!edit.ok()) return edit.status();
         auto client = Client::Connect(g.socket);
         if (!client.ok()) return client.status();
         auto selected = SelectJobs(*client, tasks);
         if (!selected.ok()) return selected.status();
         auto reply = client->Update(UpdateRequest{selected->ids, selected->arrays, *edit});
         if (!reply.ok()) return reply.status();
         return PrintResults(g, out, reply->results, "updated", selected->task_names);
       }},
      {"gpus", "Show the node's devices, their slices and jobs", [&](CLI::App*) {},
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         auto reply = Send(g, &Client::Gpus);
         if (!reply.ok()) return reply.status();
         if (g.json_output)
           out << ToJson(*reply).dump(2) << "\n";
         else
           out << FormatGpus(*reply);
         return 0;
       }},
      {"wait", "Wait until jobs end; exit 0 when all completed, 1 otherwise",
       [&](CLI::App* c) {
         c->add_option("jobs", tasks,
                       "job ids (an array's id waits for all its tasks), or tasks as ARRAY_INDEX "
                       "or ARRAY_[LIST]")
             ->required()
             ->type_name(kJobOrTaskType);
       },
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         return RunWait(g.socket, tasks, g.json_output, out);
       }},
      {"logs", "Print a job's output (--stderr for its error stream, -f to follow it)",
       [&](CLI::App* c) {
         c->add_option("job", logs.job, "job id, or a task as ARRAY_INDEX (12_3)")
             ->required()
             ->type_name(kJobOrTaskType);
         c->add_flag("--stderr", logs.stderr_stream, "the error stream instead of stdout");
         c->add_flag("-f,--follow", logs.follow,
                     "then print new output as it comes, until the job ends (or Ctrl-C)");
         c->add_option("--tail", logs.tail_lines, "only the last N lines (of the last 256 KiB)")
             ->check(CountIn(1, kLogsMaxTailLines));
       },
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         return RunLogs(g.socket, g.json_output, logs, out);
       }},
      {"report",
       "Summarise ended jobs: device memory asked vs used, whole-GPU use, energy, per user",
       [&](CLI::App* c) {
         c->add_option("-u,--user", user, "only this user's jobs");
         c->add_option("-n,--limit", limit, "the newest this many jobs (default 10000)")
             ->check(CountIn(0, 1000000));
         c->add_option(
             "--since", report.since,
             "jobs that ended at or after: YYYY-MM-DD[THH:MM] (local time), or 7d, 24h ago");
         c->add_option("--until", report.until, "jobs that ended before: as --since");
         c->add_flag("--csv", report.csv,
                     "CSV (RFC 4180) with a header line: one row per user and the total");
         c->add_flag("--jobs", report.jobs, "with --csv: one row per job instead");
       },
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         return RunReport(g.socket, g.json_output, report, user, limit, out);
       }},
      {"cdi",
       "Open a lease on a slice for a container and write its CDI spec: pinpoint cdi [--gpu-mem "
       "SIZE [--gpu-share PCT]] [--user U]",
       [&](CLI::App* c) {
         c->add_option("--gpus", cdi.gpus, "whole GPUs, or with --gpu-mem the number of slices")
             ->check(CountIn(1, 1024));
         c->add_option("--gpu-mem", cdi.gpu_mem,
                       "device memory of the slice, context included (e.g. 5G)");
         c->add_option("--gpu-share", cdi.gpu_share, "SM share of the slice (e.g. 20%)");
         c->add_option("--user", cdi.user,
                       "the lease's user, whose MPS server the container reaches (root only)");
         c->add_option("--name", cdi.name, "a name for people");
         c->add_option("--cdi-dir", cdi.cdi_dir, "where the spec goes (default /var/run/cdi)");
       },
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         return RunCdi(g.socket, g.json_output, cdi, out);
       }},
      {"top", "Live view of the GPUs and the jobs on them (q or Ctrl-C to leave)",
       [&](CLI::App* c) {
         c->add_option("-i,--interval", top.interval_s, "seconds between refreshes")
             ->check(DecimalIn(0.1, 3600.0));
         c->add_option("-c,--count", top.count, "stop after this many frames (0: never)")
             ->check(CountIn(0, 1000000));
       },
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         return RunTop(g.socket, g.json_output, top, out);
       }},
      {"version", "Print the client's and the daemon's version", [&](CLI::App*) {},
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         auto reply = Send(g, &Client::Version);
         if (g.json_output) {
           json j{{"client", VersionText()}};
           if (reply.ok()) j["daemon"] = WithOk(ToJson(*reply));
           out << j.dump(2) << "\n";
         } else {
           out << "pinpoint " << VersionText() << "\n";
           if (reply.ok())
             out << "pinpointd " << EscapeForTerminal(reply->version) << " (backend "
                 << EscapeForTerminal(reply->backend) << ", store schema " << reply->schema
                 << ")\n";
         }
         if (!reply.ok()) return reply.status();
         return 0;
       }},
  };
}

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

}  // namespace

namespace {

// The subcommand CLI11 was parsing, or null.
const CLI::App* ParsedSub(const std::vector<std::pair<CLI::App*, const Command*>>& subs) {
  for (const auto& [sub, c] : subs)
    if (sub->parsed()) return sub;
  return nullptr;
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
  SubmitArgs submit;
  std::string shown;
  std::vector<std::string> tasks;
  bool all = false;
  LogsArgs logs;
  ReportArgs report;
  std::string user;
  int limit = 0, offset = 0;
  TopArgs top;
  CdiArgs cdi;
  UpdateArgs update;
  QueueArgs queue;
  auto commands = Commands(submit, shown, tasks, all, user, limit, offset, logs, report, top, cdi,
                           update, queue);
  std::vector<std::pair<CLI::App*, const Command*>> subs;
  for (const auto& c : commands) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    c.setup(sub);
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
  if (arranged->opaque) {
    const std::string& name = arranged->subcommand;
    int at = static_cast<int>(arranged->index) + 1;
    if (name == "completion")
      return PrintCompletion(app, at + 1 < argc ? argv[at + 1] : "", out, err);
    // A --socket before the companion's name reaches it as PINPOINT_SOCKET.
    std::string socket;
    for (size_t i = 0; i + 1 < arranged->index; ++i)
      if (arranged->args[i] == "--socket") socket = arranged->args[i + 1];
    for (const auto& c : kCompanions)
      if (name == c.name) return ExecCompanion(c.program, argc, argv, at, socket, err);
  }
  std::string where =
      arranged->subcommand.empty() ? "pinpoint" : "pinpoint " + arranged->subcommand;
  std::vector<std::string> words = arranged->args;
  if (arranged->subcommand == "submit") {
    // A job script's #SBATCH and #PINPOINT lines, as sbatch reads them (script_directives.h).
    std::vector<std::string> warnings;
    ApplyScript(app, words, arranged->index, &warnings);
    for (const std::string& w : warnings) err << w << "\n";
  }
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
    if (arranged->subcommand.empty()) {
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
  for (auto& [sub, c] : subs) {
    if (!sub->parsed()) continue;
    auto code = c->run(g, out);
    if (!code.ok()) {
      err << "pinpoint: " << EscapeForTerminal(code.status().message()) << "\n";
      return ExitCodeFor(code.status());
    }
    return *code;
  }
  return 2;
}

}  // namespace pinpoint::cli
