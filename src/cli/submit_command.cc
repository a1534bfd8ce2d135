#include "cli/submit_command.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <sstream>
#include <thread>

#include "cli/format.h"
#include "cli/job_arrays.h"
#include "cli/submit_tasks.h"
#include "cli/submit_wait.h"
#include "cli/usage.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/array_spec.h"
#include "pinpoint/client.h"
#include "pinpoint/escape.h"

namespace pinpoint::cli {

namespace {

// How long a submit waits before its one retry: long enough for a restarting daemon to listen.
constexpr std::chrono::milliseconds kSubmitRetryDelay{1000};

// One submit on a connection of its own.
Result<SubmitReply> SubmitOnce(const std::string& socket, const SubmitRequest& op) {
  auto client = Client::Connect(socket);
  if (!client.ok()) return client.status();
  return client->Submit(op);
}

}  // namespace

void AddSubmitOptions(CLI::App* c, SubmitArgs& submit) {
  // A script's directives come first and the command line after: the last value given wins.
  c->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  c->add_option("-G,--gpus,--gpus-per-node", submit.gpus_text,
                "whole GPUs, or with --gpu-mem the number of slices; Slurm's TYPE:N is N GPUs "
                "of this node, whatever their model");
  c->add_option("--gpu-mem", submit.gpu_mem,
                "device memory of a slice, context included (e.g. 4G, 512MiB)");
  c->add_option("--gpu-share", submit.gpu_share, "SM share of a slice (e.g. 20%)");
  c->add_option(
      "--mig", submit.mig,
      "a MIG instance of this profile (e.g. 1g.10gb); without --gpu-mem, all of its memory");
  c->add_option("--device", submit.devices,
                "run on these devices: indices as `pinpoint gpus` lists them, one per GPU "
                "(e.g. 1 or 0,2), as a batch system chose them");
  c->add_option("-c,--cpus,--cpus-per-task", submit.cpus, "host CPUs")->check(CountIn(1, 65536));
  c->add_option("--mem", submit.mem, "host memory (e.g. 8G; a bare number is MiB, as Slurm's)");
  c->add_option("--mem-per-cpu", submit.mem_per_cpu,
                "host memory per CPU (as --mem): --mem is this times the job's CPUs");
  c->add_option("--open-mode", submit.open_mode,
                "Slurm's append or truncate for -o/-e; pinpoint truncates (append: a warning)");
  c->add_option("--priority", submit.priority, "higher runs first")
      ->check(CountIn(-1000000, 1000000));
  c->add_option("-q,--qos", submit.qos,
                "the job's service class (Slurm's QOS; `pinpoint qos` lists them; default: the "
                "node's default class)");
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
                "write the job's stdout (and stderr, without -e) to this file; %j (or %J) job "
                "id, %u user, %x name, %A array id, %a task index, %N node name");
  c->add_option("-e,--error", submit.error,
                "write the job's stderr to this file; %j (or %J) job id, %u user, %x name, %A "
                "array id, %a task index, %N node name");
  c->add_flag("--hold", submit.hold, "queue the job held: it starts only after `pinpoint release`");
  c->add_flag("--requeue", submit.requeue,
              "back to the queue, not failed, when the job is lost with its node or ended "
              "by an MPS fault");
  AddSchedOptions(c, submit.sched);
  AddTaskOptions(c, submit.tasks);
  RefuseSlurmOnly(c);
  submit.array_option = c->add_option("-a,--array", submit.array,
                                      "a job array: one job per index, e.g. 1-100, 0-15:4 "
                                      "or 1,3,5-7; %K runs at most K at once");
  c->add_option("command", submit.command, "the command and its arguments")
      ->required()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

ScriptOrigins ScriptFieldsOf(const std::vector<ScriptOption>& options) {
  using F = ScriptField;
  struct Sets {
    const char* long_name;
    std::vector<F> fields;
  };
  static const Sets kSets[] = {
      {"as-user", {F::kAsUser}},  {"priority", {F::kPriority}},
      {"hold", {F::kHold}},       {"after", {F::kAfter}},
      {"afterok", {F::kAfterOk}}, {"dependency", {F::kAfter, F::kAfterOk}},
      {"array", {F::kArray}},     {"name", {F::kName}},
      {"output", {F::kOutput}},   {"error", {F::kError}},
      {"export", {F::kEnv}},      {"chdir", {F::kCwd}},
      {"time", {F::kTimeLimit}},  {"qos", {F::kQos}},
  };
  ScriptOrigins origins;
  for (const ScriptOption& o : options)
    for (const Sets& set : kSets)
      if (o.option->check_lname(set.long_name))
        for (F field : set.fields) origins[field] = o.place;
  return origins;
}

Result<int> RunSubmit(const std::string& socket, bool json, SubmitArgs& submit, std::ostream& out,
                      std::ostream& err) {
  // An array task named as a dependency (12_2): its job id, from the daemon (the API takes ids).
  PP_RETURN_IF_ERROR(ResolveTaskDependencies(&submit.sched, [&](JobId array, int index) {
    auto client = Client::Connect(socket);
    if (!client.ok()) return Result<JobId>(client.status());
    return FindArrayTask(*client, array, index);
  }));
  std::vector<std::string> dropped;
  auto request = BuildRequest(submit, &dropped);
  if (!request.ok()) return AtScriptPlace(submit, request.status());
  PP_RETURN_IF_ERROR(CheckRunnable(*request));
  if (!dropped.empty()) {
    std::string names;
    for (const auto& n : dropped) names += (names.empty() ? "" : ", ") + EscapeForTerminal(n);
    err << "pinpoint: not passed to the job (they look like secrets; docs/security.md): " << names
        << "\n";
  }
  if (submit.open_mode == "append")
    err << "pinpoint: --open-mode append: pinpoint writes the -o/-e files from their start "
           "(truncate)\n";
  // With --wait the job is waited for here, not by the daemon's submit: its id comes at
  // once and Ctrl-C can cancel it (cli/submit_wait.h).
  SubmitRequest op{*request, false, std::nullopt, submit.hold, std::nullopt, submit.from_script};
  if (submit.array_option->count() > 0) {
    auto spec = ParseArraySpec(submit.array);
    if (!spec.ok()) return spec.status();
    op.array = std::move(spec).value();
  }
  std::string key = IdempotencyKey();
  if (!key.empty()) op.idempotency_key = key;
  auto reply = SubmitOnce(socket, op);
  // The reply may be lost after the daemon stored the job; the same key makes the retry
  // find that job instead of running it twice.
  if (!reply.ok() && reply.status().code() == Code::kUnavailable && !key.empty()) {
    std::this_thread::sleep_for(kSubmitRetryDelay);
    reply = SubmitOnce(socket, op);
  }
  if (!reply.ok()) return reply.status();
  // --parsable: the id alone on stdout, at once (with --wait, before the wait, and nothing
  // after it: the exit code says how the job ended).
  if (submit.parsable && !json) {
    out << (reply->array ? reply->array->id : reply->job.id) << std::endl;
    if (!submit.wait) return 0;
  }
  std::ostringstream unused;
  std::ostream& shown = submit.parsable && !json ? unused : out;
  if (reply->array)
    return FinishArraySubmit(socket, *reply, submit.wait, submit.hold, json, shown, err);
  const JobView& job = reply->job;
  if (!submit.wait) {
    if (json)
      out << ToJson(job).dump(2) << "\n";
    else
      out << "submitted job " << job.id << (submit.hold ? " (held)" : "") << "\n";
    return 0;
  }
  // Said once Ctrl-C is blocked: whoever reads it and presses Ctrl-C cancels the job.
  auto waited = WaitCancellingOnSignal(
      socket, job.id, err,
      "pinpoint: submitted job " + std::to_string(job.id) + ", waiting (Ctrl-C cancels it)");
  // A daemon restarting under the wait: once more, a second later, as the submit itself.
  if (!waited.ok() && waited.status().code() == Code::kUnavailable) {
    std::this_thread::sleep_for(kSubmitRetryDelay);
    waited = WaitCancellingOnSignal(socket, job.id, err);
  }
  if (!waited.ok()) return waited.status();
  if (waited->job) {
    const JobView& ended = *waited->job;
    if (json)
      out << ToJson(ended).dump(2) << "\n";
    else
      shown << FormatJobEnd(ended);
  }
  return SubmitWaitExitCode(*waited);
}

}  // namespace pinpoint::cli
