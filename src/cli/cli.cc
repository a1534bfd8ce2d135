#include "cli/cli.h"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <iostream>
#include <random>
#include <thread>

#include <CLI/CLI.hpp>

#include "cli/advice.h"
#include "cli/cdi.h"
#include "cli/completion.h"
#include "cli/format.h"
#include "cli/top.h"
#include "common/companion.h"
#include "common/terminal.h"
#include "common/version.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/client.h"
#include "pinpoint/escape.h"
#include "pinpoint/job.h"
#include "pinpoint/units.h"

extern char** environ;

namespace pinpoint::cli {

using nlohmann::json;

namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Globals {
  std::string socket = DefaultSocketPath();
  bool json_output = false;
  std::ostream* err = &std::cerr;
};

struct SubmitArgs {
  int gpus = -1;
  std::string gpu_mem, gpu_share, mem, name, as_user;
  std::string devices;
  int cpus = 1;
  int priority = 0;
  bool wait = false;
  std::vector<std::string> command;
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
Result<Reply> Send(const Globals& g, Result<Reply> (Client::*op)(Args...), const std::remove_cvref_t<Args>&... args) {
  auto client = Client::Connect(g.socket);
  if (!client.ok()) return client.status();
  return ((*client).*op)(args...);
}

json JobsJson(const std::vector<JobView>& jobs) {
  json out = json::array();
  for (const auto& job : jobs) out.push_back(ToJson(job));
  return out;
}

// A reply as --json has always printed it for `logs` and `version`: with its "ok".
json WithOk(json reply) {
  reply["ok"] = true;
  return reply;
}

// How long a submit waits before its one retry: long enough for a restarting daemon to listen.
constexpr std::chrono::milliseconds kSubmitRetryDelay{1000};

// A fresh random key per `pinpoint submit` (docs/cli.md); empty when no randomness is at hand,
// and then the submit is not retried.
std::string IdempotencyKey() {
  try {
    std::random_device random;
    std::string key = "cli-";
    static constexpr char kHex[] = "0123456789abcdef";
    for (int i = 0; i < 8; ++i) {
      uint32_t word = random();
      for (int nibble = 0; nibble < 4; ++nibble, word >>= 4) key += kHex[word & 0xf];
    }
    return key;
  } catch (const std::exception&) {
    return "";
  }
}

// "1" or "0,2": device indices. Errors: kInvalidArgument naming the text.
Result<std::vector<int>> ParseDeviceList(const std::string& text) {
  std::vector<int> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = std::min(text.find(',', start), text.size());
    std::string item = text.substr(start, comma - start);
    if (item.empty() || item.size() > 7 || item.find_first_not_of("0123456789") != std::string::npos)
      return InvalidArgument("invalid --device '" + text + "' (device indices, e.g. 1 or 0,2)");
    out.push_back(std::stoi(item));
    start = comma + 1;
  }
  return out;
}

Result<JobRequest> BuildRequest(const SubmitArgs& a) {
  JobRequest r;
  r.name = a.name;
  r.argv = a.command;
  if (r.argv.empty()) return InvalidArgument("submit needs a command to run (after --)");
  char cwd[4096];
  if (::getcwd(cwd, sizeof(cwd)) == nullptr) return InvalidArgument("cannot read the working directory");
  r.cwd = cwd;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos && eq > 0) r.env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  if (!a.gpu_mem.empty()) {
    auto mem = ParseSize(a.gpu_mem);
    if (!mem.ok()) return mem.status();
    if (*mem == 0) return InvalidArgument("--gpu-mem must be more than 0");
    r.gpu_mem_bytes = *mem;
  }
  if (!a.gpu_share.empty()) {
    auto share = ParsePercent(a.gpu_share);
    if (!share.ok()) return share.status();
    if (a.gpu_mem.empty()) return InvalidArgument("--gpu-share needs --gpu-mem (a slice); whole GPUs have no share");
    r.gpu_share_pct = *share;
  }
  if (!a.devices.empty()) {
    auto devices = ParseDeviceList(a.devices);
    if (!devices.ok()) return devices.status();
    r.devices = *devices;
  }
  if (a.gpus >= 0) r.gpus = a.gpus;
  else if (!r.devices.empty()) r.gpus = static_cast<int>(r.devices.size());
  else r.gpus = r.gpu_mem_bytes > 0 ? 1 : 0;
  if (r.gpus == 0 && r.gpu_mem_bytes > 0) return InvalidArgument("--gpu-mem needs --gpus of at least 1");
  if (!a.mem.empty()) {
    auto mem = ParseSize(a.mem);
    if (!mem.ok()) return mem.status();
    r.mem_bytes = *mem;
  }
  r.cpus = a.cpus;
  r.priority = a.priority;
  r.as_user = a.as_user;
  PP_RETURN_IF_ERROR(ValidateRequest(r));
  return r;
}

struct TopArgs {
  double interval_s = 1.0;
  int count = 0;  // frames; 0: until interrupted
};

Result<int> RunTop(const Globals& g, const TopArgs& a, std::ostream& out) {
  auto client = Client::Connect(g.socket);
  if (!client.ok()) return client.status();
  bool in_place = a.count != 1 && StyleForFd(STDOUT_FILENO).redraw;  // plain frames in a pipe or log
  for (int frame = 0; a.count == 0 || frame < a.count; ++frame) {
    if (frame > 0) ::usleep(static_cast<useconds_t>(a.interval_s * 1e6));  // the refresh rate, not synchronisation
    auto reply = client->Gpus();
    if (!reply.ok()) return reply.status();
    if (g.json_output) {
      out << ToJson(*reply).dump() << "\n";
    } else {
      out << (in_place ? "\x1b[H\x1b[2J" : (frame > 0 ? "\n" : "")) << FormatTop(*reply, NowMs());
    }
    out.flush();
  }
  return 0;
}

// `pinpoint bench ...`, `pinpoint slurm ...` and `pinpoint htcondor ...` are pinpoint-bench,
// pinpoint-slurm and pinpoint-htcondor next to this binary or in <prefix>/libexec/pinpoint
// (common/companion.h; docs/benchmarks.md, docs/cluster.md). They get PINPOINT_BIN (this binary) and,
// when --socket came before the command, PINPOINT_SOCKET.
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
int PrintCompletion(const CLI::App& app, const std::string& shell, std::ostream& out, std::ostream& err) {
  CompletionCommand root = DescribeApp(app);
  root.name = "pinpoint";
  for (auto& companion : CompanionCommands()) root.subcommands.push_back(std::move(companion));
  if (shell == "bash") out << BashCompletion(root);
  else if (shell == "zsh") out << ZshCompletion(root);
  else {
    err << "pinpoint: completion needs a shell: bash or zsh\n";
    return 2;
  }
  return 0;
}

std::vector<Command> Commands(SubmitArgs& submit, int64_t& job_id, std::vector<int64_t>& ids,
                              bool& all, std::string& user, int& limit, int& offset, bool& stderr_stream,
                              TopArgs& top, CdiArgs& cdi) {
  return {
      {"submit", "Submit a job: pinpoint submit [--gpus N] [--gpu-mem SIZE [--gpu-share PCT]] -- CMD...",
       [&](CLI::App* c) {
         c->add_option("--gpus", submit.gpus, "whole GPUs, or with --gpu-mem the number of slices")->check(CLI::Range(0, 1024));
         c->add_option("--gpu-mem", submit.gpu_mem, "device memory of a slice, context included (e.g. 4G, 512MiB)");
         c->add_option("--gpu-share", submit.gpu_share, "SM share of a slice (e.g. 20%)");
         c->add_option("--device", submit.devices,
                       "run on these devices: indices as `pinpoint gpus` lists them, one per GPU (e.g. 1 or 0,2), as a batch system chose them");
         c->add_option("--cpus", submit.cpus, "host CPUs")->check(CLI::Range(1, 65536));
         c->add_option("--mem", submit.mem, "host memory (e.g. 8G)");
         c->add_option("--priority", submit.priority, "higher runs first")->check(CLI::Range(-1000000, 1000000));
         c->add_option("--name", submit.name, "a name for people");
         c->add_option("--as-user", submit.as_user, "run as this user (root only)");
         c->add_flag("--wait", submit.wait, "wait for the job to end; exit with its exit code");
         c->add_option("command", submit.command, "the command and its arguments")->required();
       },
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         auto request = BuildRequest(submit);
         if (!request.ok()) return request.status();
         SubmitRequest op{*request, submit.wait, std::nullopt};
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
         const JobView& job = reply->job;
         if (g.json_output) out << ToJson(job).dump(2) << "\n";
         else if (submit.wait) out << "job " << job.id << " " << JobStateName(job.state) << " (" << EscapeForTerminal(job.detail) << ")\n";
         else out << "submitted job " << job.id << "\n";
         // Ended without an exit code (a signal, a failed launch, a cancel): 1.
         return submit.wait ? job.exit_code.value_or(1) : 0;
       }},
      {"queue", "List pending and running jobs (--all: also ended ones), one page at a time",
       [&](CLI::App* c) {
         c->add_flag("-a,--all", all, "include ended jobs");
         c->add_option("-u,--user", user, "only this user's jobs");
         c->add_option("-n,--limit", limit, "jobs per page (default 100, at most 10000)")
             ->check(CLI::Range(0, kQueueMaxLimit));
         c->add_option("--offset", offset, "skip this many jobs: the queue counts from its oldest job, --all from the newest")
             ->check(CLI::Range(0, 1'000'000'000));
       },
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         QueueRequest req{all, std::nullopt, limit, offset};
         if (!user.empty()) req.user = user;
         auto reply = Send(g, &Client::Queue, req);
         if (!reply.ok()) return reply.status();
         if (g.json_output) out << JobsJson(reply->jobs).dump(2) << "\n";
         else out << FormatQueue(*reply, NowMs());
         // With --json the array stays what scripts parse; the note goes to stderr.
         (g.json_output ? *g.err : out) << MoreJobsLine(*reply, all, user);
         return 0;
       }},
      {"show", "Show one job with its history",
       [&](CLI::App* c) { c->add_option("job", job_id, "job id")->required(); },
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         auto reply = Send(g, &Client::Show, ShowRequest{job_id});
         if (!reply.ok()) return reply.status();
         Advice advice = AdviseJob(reply->job);
         if (g.json_output) {
           json j = ToJson(*reply);
           j["advice"] = {{"text", advice.text},
                          {"suggested_gpu_mem_bytes", advice.enough_data ? json(advice.suggested_gpu_mem_bytes) : json(nullptr)}};
           out << j.dump(2) << "\n";
         } else {
           out << FormatJob(*reply, advice.text);
         }
         return 0;
       }},
      {"cancel", "Cancel jobs (your own; root: any)",
       [&](CLI::App* c) { c->add_option("jobs", ids, "job ids")->required(); },
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         auto reply = Send(g, &Client::Cancel, CancelRequest{ids});
         if (!reply.ok()) return reply.status();
         if (g.json_output) {
           out << ToJson(*reply)["results"].dump(2) << "\n";
         }
         Status worst;
         for (const auto& r : reply->results) {
           if (r.status.ok()) {
             if (!g.json_output) out << "cancelled job " << r.id << "\n";
           } else {
             if (worst.ok()) worst = r.status;
             if (!g.json_output) *g.err << "pinpoint: " << EscapeForTerminal(r.status.message()) << "\n";
           }
         }
         return ExitCodeFor(worst);
       }},
      {"gpus", "Show the node's devices, their slices and jobs",
       [&](CLI::App*) {},
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         auto reply = Send(g, &Client::Gpus);
         if (!reply.ok()) return reply.status();
         if (g.json_output) out << ToJson(*reply).dump(2) << "\n";
         else out << FormatGpus(*reply);
         return 0;
       }},
      {"wait", "Wait until jobs end; exit 0 when all completed, 1 otherwise",
       [&](CLI::App* c) { c->add_option("jobs", ids, "job ids")->required(); },
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         auto client = Client::Connect(g.socket);
         if (!client.ok()) return client.status();
         json jobs = json::array();
         int code = 0;
         for (int64_t id : ids) {
           auto reply = client->Wait(WaitRequest{id});
           if (!reply.ok()) return reply.status();
           const JobView& job = reply->job;
           if (job.state != JobState::kCompleted) code = 1;
           if (g.json_output) jobs.push_back(ToJson(job));
           else out << "job " << id << " " << JobStateName(job.state) << " (" << EscapeForTerminal(job.reason) << ")\n";
         }
         if (g.json_output) out << jobs.dump(2) << "\n";
         return code;
       }},
      {"logs", "Print a job's output (--stderr for its error stream)",
       [&](CLI::App* c) {
         c->add_option("job", job_id, "job id")->required();
         c->add_flag("--stderr", stderr_stream, "the error stream instead of stdout");
       },
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         LogsRequest req{job_id, stderr_stream ? LogStream::kStderr : LogStream::kStdout, kLogsDefaultMaxBytes};
         auto reply = Send(g, &Client::Logs, req);
         if (!reply.ok()) return reply.status();
         if (g.json_output) out << WithOk(ToJson(*reply)).dump(2) << "\n";
         else out << reply->data;
         return 0;
       }},
      {"report", "Summarise ended jobs: device memory asked vs used, whole-GPU use, energy, per user",
       [&](CLI::App* c) {
         c->add_option("-u,--user", user, "only this user's jobs");
         c->add_option("-n,--limit", limit, "the newest this many jobs (default 10000)")->check(CLI::Range(0, 1000000));
       },
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         std::vector<JobView> jobs;
         int want = limit > 0 ? limit : 10000;
         while (static_cast<int>(jobs.size()) < want) {
           int got = static_cast<int>(jobs.size());
           QueueRequest req{true, std::nullopt, std::min(want - got, 1000), got};  // report: 1000 a page
           if (!user.empty()) req.user = user;
           auto reply = Send(g, &Client::Queue, req);
           if (!reply.ok()) return reply.status();
           for (auto& job : reply->jobs) jobs.push_back(std::move(job));
           if (reply->jobs.empty() || reply->more == 0) break;
         }
         UsageReport report = Report(jobs);
         if (g.json_output) out << ToJson(report).dump(2) << "\n";
         else out << FormatReport(report);
         return 0;
       }},
      {"cdi", "Open a lease on a slice for a container and write its CDI spec: pinpoint cdi [--gpu-mem SIZE [--gpu-share PCT]] [--user U]",
       [&](CLI::App* c) {
         c->add_option("--gpus", cdi.gpus, "whole GPUs, or with --gpu-mem the number of slices")->check(CLI::Range(1, 1024));
         c->add_option("--gpu-mem", cdi.gpu_mem, "device memory of the slice, context included (e.g. 5G)");
         c->add_option("--gpu-share", cdi.gpu_share, "SM share of the slice (e.g. 20%)");
         c->add_option("--user", cdi.user, "the lease's user, whose MPS server the container reaches (root only)");
         c->add_option("--name", cdi.name, "a name for people");
         c->add_option("--cdi-dir", cdi.cdi_dir, "where the spec goes (default /var/run/cdi)");
       },
       [&](const Globals& g, std::ostream& out) -> Result<int> { return RunCdi(g.socket, g.json_output, cdi, out); }},
      {"top", "Live view of the GPUs and the jobs on them (Ctrl-C to leave)",
       [&](CLI::App* c) {
         c->add_option("-i,--interval", top.interval_s, "seconds between refreshes")->check(CLI::Range(0.1, 3600.0));
         c->add_option("-c,--count", top.count, "stop after this many frames (0: never)")->check(CLI::Range(0, 1000000));
       },
       [&](const Globals& g, std::ostream& out) -> Result<int> { return RunTop(g, top, out); }},
      {"version", "Print the client's and the daemon's version",
       [&](CLI::App*) {},
       [&](const Globals& g, std::ostream& out) -> Result<int> {
         auto reply = Send(g, &Client::Version);
         if (g.json_output) {
           json j{{"client", VersionText()}};
           if (reply.ok()) j["daemon"] = WithOk(ToJson(*reply));
           out << j.dump(2) << "\n";
         } else {
           out << "pinpoint " << VersionText() << "\n";
           if (reply.ok())
             out << "pinpointd " << EscapeForTerminal(reply->version) << " (backend " << EscapeForTerminal(reply->backend)
                 << ", store schema " << reply->schema << ")\n";
         }
         if (!reply.ok()) return reply.status();
         return 0;
       }},
  };
}

}  // namespace

int RunCli(int argc, char** argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"pinpoint: exactly the GPU slice each job asks for"};
  app.require_subcommand(1);
  Globals g;
  g.err = &err;
  app.add_option("--socket", g.socket, "pinpointd's socket (default $PINPOINT_SOCKET or /run/pinpoint/pinpointd.sock)");
  app.add_flag("--json", g.json_output, "machine-readable output");
  app.set_version_flag("--version", std::string("pinpoint ") + VersionText(), "print pinpoint's version and exit");
  SubmitArgs submit;
  int64_t job_id = 0;
  std::vector<int64_t> ids;
  bool all = false, stderr_stream = false;
  std::string user;
  int limit = 0, offset = 0;
  TopArgs top;
  CdiArgs cdi;
  auto commands = Commands(submit, job_id, ids, all, user, limit, offset, stderr_stream, top, cdi);
  std::vector<std::pair<CLI::App*, const Command*>> subs;
  for (const auto& c : commands) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    c.setup(sub);
    subs.emplace_back(sub, &c);
  }
  // Options after the command belong to it: `submit -- python train.py --lr 1`.
  app.get_subcommand("submit")->prefix_command(false);
  app.allow_extras(false);
  // A mistyped command deserves its own line rather than "a subcommand is required".
  std::string socket_before;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--socket") {
      if (i + 1 < argc) socket_before = argv[i + 1];
      ++i;
      continue;
    }
    if (a.empty() || a[0] == '-') continue;
    if (a == "bench") return ExecCompanion("pinpoint-bench", argc, argv, i, socket_before, err);
    if (a == "slurm") return ExecCompanion("pinpoint-slurm", argc, argv, i, socket_before, err);
    if (a == "htcondor") return ExecCompanion("pinpoint-htcondor", argc, argv, i, socket_before, err);
    if (a == "completion") return PrintCompletion(app, i + 1 < argc ? argv[i + 1] : "", out, err);
    bool known = false;
    std::string names;
    for (const auto& c : commands) {
      known |= a == c.name;
      names += std::string(names.empty() ? "" : ", ") + c.name;
    }
    if (!known) {
      err << "pinpoint: unknown command '" << EscapeForTerminal(a) << "' (commands: " << names << ", bench, slurm, htcondor)\n";
      return 2;
    }
    break;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return 0;
  } catch (const CLI::CallForVersion&) {
    out << app.version() << "\n";
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::ParseError& e) {
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
    err << "pinpoint: " << e.what() << " (see pinpoint --help)\n";
    return 2;
  }
  if (job_id < 0) {
    err << "pinpoint: job ids are positive numbers\n";
    return 2;
  }
  for (int64_t id : ids) {
    if (id <= 0) {
      err << "pinpoint: job ids are positive numbers (got " << id << ")\n";
      return 2;
    }
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
