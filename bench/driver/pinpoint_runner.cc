#include "bench/driver/pinpoint_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <thread>

#include "bench/driver/proc.h"
#include "common/file_util.h"
#include "common/process.h"

namespace pinpoint::bench {

namespace {

using nlohmann::json;

constexpr int kReadyTimeoutMs = 30000;
constexpr int kCancelWaitMs = 15000;

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

// Makes `client`'s blocked call return (Client::Interrupt) once *stop turns true or timeout_ms
// have passed (0: no limit). Checks every 100 ms from a thread of its own, which the destructor
// stops and joins.
class CallGuard {
 public:
  CallGuard(Client* client, const std::atomic<bool>* stop, int timeout_ms)
      : thread_([this, client, stop, timeout_ms] {
          auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
          std::unique_lock<std::mutex> lock(mu_);
          while (!done_) {
            bool stopped = stop != nullptr && stop->load();
            bool late = timeout_ms > 0 && std::chrono::steady_clock::now() >= deadline;
            if (stopped || late) {
              fired_ = true;
              client->Interrupt();
              return;
            }
            cv_.wait_for(lock, std::chrono::milliseconds(100));
          }
        }) {}
  ~CallGuard() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  // Whether it interrupted the call.
  bool fired() {
    std::lock_guard<std::mutex> lock(mu_);
    return fired_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  bool fired_ = false;
  std::thread thread_;  // last: starts once the members it reads exist
};

std::map<std::string, std::string> EnvironmentMap(const std::vector<std::string>& env) {
  std::map<std::string, std::string> out;
  for (const std::string& kv : env) {
    size_t eq = kv.find('=');
    if (eq != std::string::npos) out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
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

std::vector<JobRequest> CopyRequests(const Workload& workload, const BenchOptions& options,
                                     const std::string& tag, int n,
                                     const std::map<std::string, std::string>& env,
                                     const std::string& cwd, const std::vector<int>& devices) {
  std::vector<JobRequest> copies;
  for (int i = 0; i < n; ++i) {
    JobRequest r;
    r.name = tag + "-" + std::to_string(i);
    r.argv = workload.argv;
    r.cwd = cwd;
    r.env = env;
    r.gpus = 1;
    r.gpu_mem_bytes = workload.gpu_mem_bytes;
    r.gpu_share_pct = options.gpu_share_pct;
    r.cpus = options.cpus;
    if (!devices.empty()) r.devices = {devices[static_cast<size_t>(i) % devices.size()]};
    copies.push_back(std::move(r));
  }
  return copies;
}

PinpointRunner::PinpointRunner(Mode mode, const RunnerContext* ctx) : mode_(mode), ctx_(ctx) {}

Result<Client> PinpointRunner::Connect() { return Client::Connect(paths_.socket_path); }

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
  char cwd[4096];
  cwd_ = ::getcwd(cwd, sizeof(cwd)) != nullptr ? cwd : "/";
  env_ = EnvironmentMap(ChildEnvironment());
  Result<Client> client = Connect();
  if (!client.ok()) return client.status();
  Result<GpusReply> gpus = client->Gpus();
  if (!gpus.ok()) return gpus.status();
  // pinpointd places the copies (what a site's jobs get) when every GPU it has is measured.
  // Otherwise, or with --pin, every copy is submitted for the device of its GPU, in turn, so
  // none lands on a GPU not measured.
  devices_.clear();
  placed_by_pinpointd_ = !ctx_->options.pin && gpus->devices.size() == ctx_->gpu_uuids.size();
  for (const std::string& uuid : ctx_->gpu_uuids) {
    auto d = std::find_if(gpus->devices.begin(), gpus->devices.end(),
                          [&](const DeviceView& v) { return v.uuid == uuid; });
    if (d == gpus->devices.end()) {
      return FailedPrecondition(std::string("pinpointd (") + ModeName(mode_) +
                                ") does not list GPU " + uuid + " (backend " + gpus->backend + ")");
    }
    devices_.push_back(d->index);
  }
  return Status::Ok();
}

Result<BatchResult> PinpointRunner::Run(int n, const std::string& tag) {
  Result<Client> client = Connect();
  if (!client.ok()) return client.status();
  std::vector<int> none;
  std::vector<JobRequest> copies = CopyRequests(ctx_->workload, ctx_->options, tag, n, env_, cwd_,
                                                placed_by_pinpointd_ ? none : devices_);
  CallGuard guard(&*client, ctx_->stop, 0);
  BatchResult batch;
  batch.jobs.resize(copies.size());
  batch.t0_s = NowSeconds();
  Status submitted = SubmitAll(*client, copies, &batch.jobs);
  if (!submitted.ok()) return guard.fired() ? Unavailable("interrupted") : submitted;
  // One request for the whole batch, answered when its last copy has ended: the driver learns
  // of the end as soon as pinpointd knows it, whatever N.
  WaitRequest wait;
  wait.ids = active_;
  Result<WaitReply> ended = client->Wait(wait);
  batch.t1_s = NowSeconds();
  if (!ended.ok()) return guard.fired() ? Unavailable("interrupted") : ended.status();
  if (ended->jobs.size() != active_.size()) return Internal("pinpoint wait: unexpected reply");
  active_.clear();
  for (size_t i = 0; i < batch.jobs.size(); ++i) {
    batch.jobs[i].known_s = batch.t1_s;
    // Placed by pinpointd: any GPU measured is right (every one it has is).
    FillJobResult(*client, ended->jobs[i],
                  placed_by_pinpointd_ ? "" : ctx_->gpu_uuids[i % ctx_->gpu_uuids.size()],
                  &batch.jobs[i]);
  }
  return batch;
}

Status PinpointRunner::SubmitAll(Client& client, const std::vector<JobRequest>& copies,
                                 std::vector<JobResult>* jobs) {
  // All copies at once, as a batch system's arrive: one "submit" each, sent back to back on one
  // connection without waiting for each reply, so that pinpointd takes them together (one
  // round trip each would make every copy a scheduling pass of its own). Where pinpointd takes
  // an array, one request for all of them goes here instead.
  std::vector<SubmitRequest> requests;
  for (const JobRequest& copy : copies) {
    SubmitRequest request;
    request.request = copy;
    requests.push_back(std::move(request));
  }
  double now = NowSeconds();
  for (JobResult& job : *jobs) job.submit_call_s = now;
  std::vector<Result<SubmitReply>> replies = client.SubmitEach(requests);
  active_.clear();
  Status why;
  for (const Result<SubmitReply>& reply : replies) {
    if (reply.ok())
      active_.push_back(reply->job.id);
    else if (why.ok())
      why = reply.status();
  }
  if (why.ok()) return Status::Ok();
  CancelActive();
  return why.code() == Code::kUnavailable ? why : Unavailable("submit refused: " + why.message());
}

void PinpointRunner::FillJobResult(Client& client, const JobView& r, const std::string& gpu,
                                   JobResult* job) {
  job->submit_s = static_cast<double>(r.submit_ms) / 1000.0;
  job->start_s = static_cast<double>(r.start_ms) / 1000.0;
  job->end_s = static_cast<double>(r.end_ms) / 1000.0;
  if (!r.allocations.empty()) job->device = r.allocations[0].uuid;
  std::string id = std::to_string(r.id);
  // Bounded reads: the head for the pp-cuda line, the tail for the pp-work line.
  LogsRequest head{r.id, LogStream::kStdout, kOutputHeadBytes};
  head.from_offset = 0;
  Result<LogsReply> first = client.Logs(head);
  std::optional<CudaStart> cuda = first.ok() ? ParseCudaLine(first->data) : std::nullopt;
  if (cuda) {
    job->first_cuda_s = cuda->first_s;
    job->ready_s = cuda->ready_s;
  }
  Result<LogsReply> logs = client.Logs(LogsRequest{r.id, LogStream::kStdout, kOutputTailBytes});
  std::optional<WorkReport> work = logs.ok() ? ParseWorkLine(logs->data) : std::nullopt;
  if (work) {
    job->units = work->units;
    job->unit = work->unit;
    job->own_seconds = work->seconds;
  }
  bool completed = r.state == JobState::kCompleted && r.exit_code == 0;
  job->ok = completed && work.has_value();
  if (!job->ok) {
    Result<LogsReply> err = client.Logs(LogsRequest{r.id, LogStream::kStderr, kOutputTailBytes});
    std::string last = err.ok() ? LastLine(err->data) : "";
    if (last.empty() && logs.ok()) last = LastLine(logs->data);
    job->detail = "job " + id + " " + JobStateName(r.state) + " (" +
                  (completed ? "no pp-work line in its output" : r.detail) + ")" +
                  (last.empty() ? "" : ": " + last);
  }
  if (job->ok && !gpu.empty() && !job->device.empty() && job->device != gpu) {
    job->ok = false;
    job->detail = "job " + id + " ran on " + job->device + ", not on " + gpu + " as submitted";
  }
}

void PinpointRunner::CancelActive() {
  if (active_.empty() || daemon_ <= 0) return;
  Result<Client> client = Connect();
  for (size_t at = 0; client.ok() && at < active_.size(); at += kCancelMaxIds) {
    auto end =
        active_.begin() + static_cast<ptrdiff_t>(std::min(active_.size(), at + kCancelMaxIds));
    CancelRequest cancel{std::vector<JobId>(active_.begin() + static_cast<ptrdiff_t>(at), end)};
    (void)client->Cancel(cancel);
    WaitRequest wait;
    wait.ids = cancel.ids;
    CallGuard guard(&*client, nullptr, kCancelWaitMs);
    (void)client->Wait(wait);
  }
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
