#include "bench/driver/pinpoint_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "bench/driver/proc.h"
#include "common/file_util.h"
#include "common/terminal.h"
#include "common/process.h"

namespace pinpoint::bench {

namespace {

using nlohmann::json;

constexpr int kCliTimeoutMs = 60000;
constexpr int kReadyTimeoutMs = 30000;

std::string ShortName(Mode mode) {
  switch (mode) {
    case Mode::kExclusive:
      return "ex";
    case Mode::kTimeslice:
      return "ts";
    default:
      return "mp";
  }
}

std::string FirstLine(const std::string& text) {
  size_t start = text.find_first_not_of("\n\r ");
  if (start == std::string::npos) return "";
  size_t end = text.find('\n', start);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of("\n\r ");
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return text.substr(start, end - start + 1);
}

double Seconds(const json& record, const char* key) {
  return record.contains(key) && record[key].is_number() ? record[key].get<double>() / 1000.0 : 0.0;
}

}  // namespace

json MakeDaemonConfig(const json& defaults, Mode mode, const DaemonPaths& paths,
                      const BenchOptions& options) {
  json c = {
      {"state_dir", paths.state_dir},
      {"socket_path", paths.socket_path},
      {"backend", options.backend},
      {"default_mode", ModeName(mode)},
      // Enough that N jobs of --cpus each never wait for host CPUs: the GPU is what is measured.
      {"host_cpus", 65536},
      {"cancel_grace_ms", 2000},
      {"cgroups", options.cgroups},
      {"mps_control", options.mps_control},
      {"mps_dir", paths.mps_dir},
      // A control daemon that quits while idle would be started again inside a later measurement.
      {"mps_idle_quit_ms", 0},
  };
  // Newer settings, set only where this pinpointd has them.
  if (defaults.contains("metrics_listen")) c["metrics_listen"] = "";  // several daemons at once
  for (const std::string& kv : options.daemon_set) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    std::string value = kv.substr(eq + 1);
    json parsed = json::parse(value, nullptr, /*allow_exceptions=*/false);
    c[kv.substr(0, eq)] = parsed.is_discarded() ? json(value) : parsed;
  }
  return c;
}

std::vector<std::string> SubmitArgs(const std::string& pinpoint, const std::string& socket,
                                    const Workload& workload, const BenchOptions& options,
                                    const std::string& name) {
  std::vector<std::string> args = {pinpoint,
                                   "--socket",
                                   socket,
                                   "--json",
                                   "submit",
                                   "--gpu-mem",
                                   std::to_string(workload.gpu_mem_bytes) + "B"};
  if (options.gpu_share_pct > 0)
    args.insert(args.end(), {"--gpu-share", std::to_string(options.gpu_share_pct)});
  args.insert(args.end(), {"--cpus", std::to_string(options.cpus), "--name", name, "--"});
  args.insert(args.end(), workload.argv.begin(), workload.argv.end());
  return args;
}

PinpointRunner::PinpointRunner(Mode mode, const RunnerContext* ctx) : mode_(mode), ctx_(ctx) {}

Result<json> PinpointRunner::Cli(const std::vector<std::string>& args, int timeout_ms) {
  std::vector<std::string> argv = {ctx_->bin_dir + "/pinpoint", "--socket", paths_.socket_path,
                                   "--json"};
  argv.insert(argv.end(), args.begin(), args.end());
  Result<CommandResult> r = RunCommand(argv, ChildEnvironment(), timeout_ms, "", ctx_->stop);
  if (!r.ok()) return r.status();
  if (r->out.empty() && r->exit_code != 0) {
    return Unavailable("pinpoint " + args.front() + ": " + FirstLine(r->err));
  }
  try {
    return json::parse(r->out);
  } catch (const std::exception& e) {
    return Internal("pinpoint " + args.front() + ": output is not JSON (" + FirstLine(r->err) +
                    ")");
  }
}

Status PinpointRunner::Setup() {
  dir_ = ctx_->scratch_dir + "/" + ShortName(mode_);
  paths_ = {dir_ + "/st", dir_ + "/s", dir_ + "/m"};
  log_path_ = dir_ + "/pinpointd.log";
  PP_RETURN_IF_ERROR(MakeDirs(dir_));
  std::string daemon = ctx_->bin_dir + "/pinpointd";
  Result<CommandResult> defaults_text =
      RunCommand({daemon, "--print-default-config"}, ChildEnvironment(), 10000);
  if (!defaults_text.ok()) return defaults_text.status();
  json defaults;
  try {
    defaults = json::parse(defaults_text->out);
  } catch (const std::exception&) {
    return Unavailable(daemon + " --print-default-config: " + FirstLine(defaults_text->err));
  }
  std::string config_path = dir_ + "/config.json";
  PP_RETURN_IF_ERROR(WriteFileAtomic(
      config_path, MakeDaemonConfig(defaults, mode_, paths_, ctx_->options).dump(2) + "\n", 0644,
      false));
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return IoError("pipe: " + ErrnoText(errno));
  SpawnSpec spec;
  spec.argv = {daemon, "--config", config_path, "--ready-fd", "3"};
  spec.env = ChildEnvironment();
  spec.stdout_path = log_path_;
  spec.stderr_path = log_path_;
  spec.ready_fd = ready[1];
  Result<pid_t> pid = Spawn(spec);
  ::close(ready[1]);
  if (!pid.ok()) {
    ::close(ready[0]);
    return pid.status();
  }
  daemon_ = *pid;
  pollfd p{ready[0], POLLIN, 0};
  char buf[16];
  bool ok = ::poll(&p, 1, kReadyTimeoutMs) > 0 && ::read(ready[0], buf, sizeof(buf)) > 0;
  ::close(ready[0]);
  if (!ok) {
    Result<std::string> log = ReadFileTail(log_path_, 4096);
    return Unavailable(std::string("pinpointd (") + ModeName(mode_) + ") did not start: " +
                       (log.ok() ? LastLine(*log) : "no log") + " (log: " + log_path_ + ")");
  }
  Result<json> gpus = Cli({"gpus"}, kCliTimeoutMs);
  if (!gpus.ok()) return gpus.status();
  bool found = false;
  size_t devices = 0;
  for (const json& d : (*gpus)["devices"]) {
    ++devices;
    if (d.value("uuid", "") == ctx_->gpu_uuid) found = true;
  }
  if (!found) {
    return FailedPrecondition(std::string("pinpointd (") + ModeName(mode_) +
                              ") does not list GPU " + ctx_->gpu_uuid + " (backend " +
                              (*gpus).value("backend", "?") + ")");
  }
  if (devices > 1) {
    note_ = std::string("pinpointd (") + ModeName(mode_) + ") has " + std::to_string(devices) +
            " devices: jobs may land on other GPUs than the one measured; points where they do are "
            "marked";
  }
  return Status::Ok();
}

Result<BatchResult> PinpointRunner::Run(int n, const std::string& tag) {
  BatchResult batch;
  batch.t0_s = NowSeconds();
  PP_RETURN_IF_ERROR(SubmitAll(n, tag));
  std::vector<json> records;
  bool tty = StyleForFd(STDERR_FILENO).redraw;  // no \r or ESC[K into a log
  for (size_t i = 0; i < active_.size(); ++i) {
    Result<json> ended = Cli({"wait", std::to_string(active_[i])}, 24 * 3600 * 1000);
    if (!ended.ok()) return ended.status();
    if (!ended->is_array() || ended->empty()) return Internal("pinpoint wait: unexpected reply");
    records.push_back((*ended)[0]);
    if (tty) std::cerr << "\r  " << i + 1 << "/" << active_.size() << " ended" << std::flush;
  }
  batch.t1_s = NowSeconds();
  if (tty) std::cerr << "\r\033[K" << std::flush;
  active_.clear();
  for (const json& r : records) batch.jobs.push_back(ToJobResult(r));
  return batch;
}

Status PinpointRunner::SubmitAll(int n, const std::string& tag) {
  // All submissions at once, as a batch system's would arrive; each is a `pinpoint submit`.
  std::vector<pid_t> pids;
  std::vector<std::string> outs, errs;
  for (int i = 0; i < n; ++i) {
    SpawnSpec spec;
    spec.argv = SubmitArgs(ctx_->bin_dir + "/pinpoint", paths_.socket_path, ctx_->workload,
                           ctx_->options, tag + "-" + std::to_string(i));
    spec.env = ChildEnvironment();
    spec.stdout_path = dir_ + "/submit-" + std::to_string(i) + ".out";
    spec.stderr_path = dir_ + "/submit-" + std::to_string(i) + ".err";
    std::filesystem::remove(spec.stdout_path);
    std::filesystem::remove(spec.stderr_path);
    PP_RETURN_IF_ERROR(SpawnIntoBatch(spec, &pids));
    outs.push_back(spec.stdout_path);
    errs.push_back(spec.stderr_path);
  }
  Status waited = WaitAll(pids, ctx_->stop, [](size_t, int, double) {});
  std::string refused;
  active_.clear();
  for (size_t i = 0; i < outs.size(); ++i) {
    Result<std::string> out = ReadFile(outs[i]);
    try {
      active_.push_back(json::parse(out.ok() ? *out : "").at("id").get<int64_t>());
    } catch (const std::exception&) {
      Result<std::string> err = ReadFile(errs[i]);
      if (refused.empty()) {
        refused = "submit refused: " + (err.ok() ? FirstLine(*err) : std::string("no output"));
      }
    }
  }
  if (!waited.ok()) {
    KillAndReap(pids, SIGTERM, 5000);
    return waited;  // the jobs submitted are cancelled by Teardown
  }
  if (!refused.empty()) {
    CancelActive();
    return Unavailable(refused);
  }
  return Status::Ok();
}

JobResult PinpointRunner::ToJobResult(const json& r) {
  JobResult job;
  job.submit_s = Seconds(r, "submit_ms");
  job.start_s = Seconds(r, "start_ms");
  job.end_s = Seconds(r, "end_ms");
  if (r.contains("allocations") && !r["allocations"].empty()) {
    job.device = r["allocations"][0].value("uuid", "");
  }
  std::string id = std::to_string(r.value("id", int64_t{0}));
  Result<json> logs = Cli({"logs", id}, kCliTimeoutMs);
  std::optional<WorkReport> work =
      logs.ok() ? ParseWorkLine(logs->value("data", "")) : std::nullopt;
  if (work) {
    job.units = work->units;
    job.unit = work->unit;
    job.own_seconds = work->seconds;
  }
  bool completed =
      r.value("state", "") == "completed" && r.contains("exit_code") && r["exit_code"] == 0;
  job.ok = completed && work.has_value();
  if (!job.ok) {
    Result<json> err = Cli({"logs", "--stderr", id}, kCliTimeoutMs);
    std::string last = err.ok() ? LastLine(err->value("data", "")) : "";
    if (last.empty() && logs.ok()) last = LastLine(logs->value("data", ""));
    job.detail = "job " + id + " " + r.value("state", "?") + " (" +
                 (completed ? "no pp-work line in its output" : r.value("detail", "")) + ")" +
                 (last.empty() ? "" : ": " + last);
  }
  if (job.ok && !job.device.empty() && job.device != ctx_->gpu_uuid) {
    job.ok = false;
    job.detail = "job " + id + " ran on " + job.device + ", not on the GPU measured";
  }
  return job;
}

void PinpointRunner::CancelActive() {
  if (active_.empty() || daemon_ <= 0) return;
  std::vector<std::string> args = {"cancel"};
  for (int64_t id : active_) args.push_back(std::to_string(id));
  (void)Cli(args, kCliTimeoutMs);
  for (int64_t id : active_)
    (void)RunCommand(
        {ctx_->bin_dir + "/pinpoint", "--socket", paths_.socket_path, "wait", std::to_string(id)},
        ChildEnvironment(), 15000);
  active_.clear();
}

void PinpointRunner::Teardown() {
  if (daemon_ <= 0) return;
  CancelActive();
  ::kill(daemon_, SIGTERM);
  if (!WaitForExit(daemon_, 15000)) ::kill(daemon_, SIGKILL);
  ::waitpid(daemon_, nullptr, 0);
  daemon_ = -1;
  // pinpointd leaves its MPS control daemons running when it stops (running jobs keep their
  // servers); none of ours is running now, so quit them.
  std::error_code ec;
  for (const auto& dev : std::filesystem::directory_iterator(paths_.mps_dir, ec)) {
    std::error_code ec2;
    for (const auto& user : std::filesystem::directory_iterator(dev.path(), ec2)) {
      std::string pipe = user.path().string() + "/pipe";
      if (!std::filesystem::exists(pipe + "/nvidia-cuda-mps-control.pid")) continue;
      std::string problem = QuitMpsControl(ctx_->options.mps_control, pipe);
      if (!problem.empty())
        std::cerr << "pinpoint bench: " << ModeName(mode_) << ": MPS: " << problem << "\n";
    }
  }
}

void PinpointRunner::SaveLogs(const std::string& dir) {
  std::error_code ignored;
  std::filesystem::copy_file(log_path_, dir + "/pinpointd-" + ModeName(mode_) + ".log",
                             std::filesystem::copy_options::overwrite_existing, ignored);
}

}  // namespace pinpoint::bench
