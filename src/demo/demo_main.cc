// pinpoint-demo: the main job (`make demo`). Starts pinpointd, submits a mixed batch (many small
// slices, some whole-GPU jobs, one multi-GPU job), shows the GPUs filling up, then runs the same
// batch with one job per GPU and prints a summary. On a node without an NVIDIA GPU it uses the
// simulated node and says so; there the jobs are timed sleeps standing in for training runs.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/spawn.h"
#include "common/terminal.h"
#include "demo/batch_stats.h"
#include "pinpoint/client.h"
#include "pinpoint/job.h"
#include "pinpoint/units.h"

namespace {

using nlohmann::json;
using pinpoint::Client;

struct DemoJob {
  std::string name;
  std::vector<std::string> size_args;  // --gpus / --gpu-mem ...
  double seconds;                      // simulated duration
  int blocks;                          // real GPU: thread blocks of pp-busy
};

// The batch fits the node: the multi-GPU job takes every whole GPU (at most 4) when the node has
// two or more, and is left out on a one-GPU node.
std::vector<DemoJob> Batch(size_t whole_gpus) {
  std::vector<DemoJob> jobs;
  for (int i = 0; i < 24; ++i) {
    std::string mem = i % 3 == 0 ? "8G" : "4G";
    jobs.push_back({"small-" + std::to_string(i), {"--gpu-mem", mem}, 0.8 + 0.1 * (i % 4), 8});
  }
  for (int i = 0; i < 3; ++i)
    jobs.push_back({"whole-" + std::to_string(i), {"--gpus", "1"}, 1.2, 132});
  if (whole_gpus >= 2)
    jobs.push_back(
        {"multi-gpu", {"--gpus", std::to_string(std::min<size_t>(whole_gpus, 4))}, 1.5, 132});
  return jobs;
}

struct Daemon {
  pid_t pid = -1;
  std::string socket;
};

// Stops pinpointd (SIGTERM; SIGKILL when it has not stopped after a minute) and reaps it.
void StopDaemon(Daemon* d) {
  if (d->pid <= 0) return;
  ::kill(d->pid, SIGTERM);
  pinpoint::WaitChild(d->pid, 60'000);
  d->pid = -1;
}

// Starts pinpointd and returns once it serves (it signals readiness through a pipe).
bool StartDaemon(const std::string& bin_dir, const std::string& state_dir, const std::string& mode,
                 Daemon* d) {
  std::system(("rm -rf '" + state_dir + "'").c_str());
  std::system(("mkdir -p '" + state_dir + "'").c_str());
  d->socket = state_dir + "/pinpointd.sock";
  std::ofstream(state_dir + "/config.json") << json{
      {"state_dir", state_dir + "/state"},
      {"socket_path", d->socket},
      {"backend", "auto"},
      {"default_mode", mode},
      {"host_cpus", 256},
      {"cancel_grace_ms", 2000}}.dump(2);
  constexpr int kReadyFd = 3, kReadyTimeoutMs = 120'000;
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return false;
  std::string log = state_dir + "/pinpointd.log";
  auto pid =
      pinpoint::Spawn({.argv = {bin_dir + "/pinpointd", "--config", state_dir + "/config.json",
                                "--ready-fd", std::to_string(kReadyFd)},
                       .out = pinpoint::SpawnStream::File(log),
                       .err_to_out = true,
                       .pass_fds = {{ready[1], kReadyFd}}});
  ::close(ready[1]);
  d->pid = pid.ok() ? *pid : -1;
  pollfd p{ready[0], POLLIN, 0};
  char buf[8];
  bool ok =
      pid.ok() && ::poll(&p, 1, kReadyTimeoutMs) > 0 && ::read(ready[0], buf, sizeof(buf)) > 0;
  ::close(ready[0]);
  if (!ok) {
    std::cerr << "pinpoint-demo: pinpointd did not start; see " << log << "\n";
    if (d->pid > 0) ::kill(d->pid, SIGKILL);
    StopDaemon(d);
  }
  return ok;
}

// One request on a connection of its own: Send(socket, &Client::Gpus).
template <typename Reply, typename... Args>
pinpoint::Result<Reply> Send(const std::string& socket,
                             pinpoint::Result<Reply> (Client::*op)(Args...),
                             const std::remove_cvref_t<Args>&... args) {
  auto c = Client::Connect(socket);
  if (!c.ok()) return c.status();
  return ((*c).*op)(args...);
}

std::string Bar(uint64_t used, uint64_t total, int width, const pinpoint::OutputStyle& style) {
  int filled =
      total == 0
          ? 0
          : static_cast<int>(width * static_cast<double>(used) / static_cast<double>(total) + 0.5);
  filled = std::clamp(filled, 0, width);
  return "[" + pinpoint::Paint(style, pinpoint::Color::kGreen, std::string(filled, '#')) +
         std::string(width - filled, '.') + "]";
}

// One line per GPU: redrawn in place on a terminal (the fill coloured unless NO_COLOR is set);
// elsewhere written again only when it changed, as plain lines (common/terminal.h).
void ShowGpus(const pinpoint::GpusReply& gpus, const pinpoint::OutputStyle& style,
              pinpoint::LiveBlock* block) {
  std::vector<std::string> lines;
  for (const auto& d : gpus.devices) {
    std::string bar = Bar(d.mem_allocated_bytes, d.mem_bytes, 30, style);
    char line[512];
    std::snprintf(line, sizeof(line), "  GPU %-2d %s %2zu job%s %9s of %s  %s", d.index,
                  bar.c_str(), d.jobs.size(), d.jobs.size() == 1 ? " " : "s",
                  pinpoint::FormatSize(d.mem_allocated_bytes).c_str(),
                  pinpoint::FormatSize(d.mem_bytes).c_str(), pinpoint::SharingModeName(d.mode));
    lines.push_back(line);
  }
  std::fputs(block->Frame(lines).c_str(), stdout);
  std::fflush(stdout);
}

struct RunResult {
  int completed = 0, failed = 0;
  double makespan_s = 0;
  double busy_gpu_s = 0;  // demo::BusyGpuSeconds
  std::map<int, int> peak_per_device;
};

bool RunBatch(const std::string& bin_dir, const Daemon& d, const std::vector<DemoJob>& batch,
              bool real_gpu, bool live, RunResult* out) {
  std::vector<int64_t> ids;
  char cwd[4096];
  if (::getcwd(cwd, sizeof(cwd)) == nullptr) return false;
  for (const auto& job : batch) {
    pinpoint::JobRequest r;
    r.name = job.name;
    r.cwd = cwd;
    r.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}};
    if (real_gpu) {
      r.argv = {bin_dir + "/pp-busy", "--blocks", std::to_string(job.blocks), "--iters",
                std::to_string(static_cast<long long>(job.seconds * 400'000'000))};
    } else {
      char secs[16];
      std::snprintf(secs, sizeof(secs), "%.2f", job.seconds);
      r.argv = {"sleep", secs};
    }
    const auto& a = job.size_args;
    if (a[0] == "--gpus") r.gpus = std::stoi(a[1]);
    if (a[0] == "--gpu-mem") {
      r.gpus = 1;
      r.gpu_mem_bytes = *pinpoint::ParseSize(a[1]);
    }
    auto reply = Send(d.socket, &Client::Submit, pinpoint::SubmitRequest{r, false, std::nullopt});
    if (!reply.ok()) {
      std::cerr << "pinpoint-demo: submit failed: " << reply.status().message() << "\n";
      return false;
    }
    ids.push_back(reply->job.id);
  }
  pinpoint::OutputStyle style = pinpoint::StyleForFd(STDOUT_FILENO);
  pinpoint::LiveBlock block(style);
  for (;;) {
    auto q = Send(d.socket, &Client::Queue, pinpoint::QueueRequest{});
    if (!q.ok()) return false;
    if (live) {
      auto g = Send(d.socket, &Client::Gpus);
      if (g.ok()) ShowGpus(*g, style, &block);
    } else if (style.redraw) {  // a count on a terminal only: a log gets the summary
      size_t ended = ids.size() - std::min(ids.size(), q->jobs.size());
      std::fputs(block
                     .Frame({"  " + std::to_string(ended) + "/" + std::to_string(ids.size()) +
                             " jobs ended"})
                     .c_str(),
                 stdout);
      std::fflush(stdout);
    }
    if (q->jobs.empty()) break;
    std::this_thread::sleep_for(
        std::chrono::milliseconds(style.redraw ? 200 : 1000));  // display refresh
  }
  auto all = Send(d.socket, &Client::Queue, pinpoint::QueueRequest{true, std::nullopt, 10000, 0});
  if (!all.ok()) return false;
  int64_t first = INT64_MAX, last = 0;
  for (const auto& j : all->jobs) {
    (j.state == pinpoint::JobState::kCompleted ? out->completed : out->failed)++;
    first = std::min(first, j.submit_ms);
    last = std::max(last, j.end_ms);
  }
  out->makespan_s = static_cast<double>(last - first) / 1000.0;
  for (const auto& j : all->jobs) {
    if (j.state == pinpoint::JobState::kCompleted) continue;
    auto err =
        Send(d.socket, &Client::Logs, pinpoint::LogsRequest{j.id, pinpoint::LogStream::kStderr});
    auto out_log =
        Send(d.socket, &Client::Logs, pinpoint::LogsRequest{j.id, pinpoint::LogStream::kStdout});
    std::printf("  job %lld (%s) %s: %s\n%s%s", static_cast<long long>(j.id),
                j.request.name.c_str(), pinpoint::JobStateName(j.state), j.detail.c_str(),
                err.ok() ? err->data.c_str() : "", out_log.ok() ? out_log->data.c_str() : "");
    break;  // the first failure says enough
  }
  out->peak_per_device = pinpoint::demo::PeakPerDevice(all->jobs);
  out->busy_gpu_s = pinpoint::demo::BusyGpuSeconds(all->jobs);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pinpoint-demo: a mixed batch on this node, packed by pinpoint vs one job per GPU"};
  std::string bin_dir = "build", state_dir = "build/demo-state";
  app.add_option("--bin-dir", bin_dir, "where pinpointd, pinpoint-shim and pp-busy are");
  app.add_option("--state-dir", state_dir, "scratch directory for the demo's daemons (absolute)");
  CLI11_PARSE(app, argc, argv);

  Daemon d;
  if (!StartDaemon(bin_dir, state_dir + "/packed", "mps", &d)) return 1;
  auto gpus = Send(d.socket, &Client::Gpus);
  if (!gpus.ok()) {
    std::cerr << "pinpoint-demo: " << gpus.status().message() << "\n";
    StopDaemon(&d);
    return 1;
  }
  bool simulated = gpus->simulated;
  bool have_busy = ::access((bin_dir + "/pp-busy").c_str(), X_OK) == 0;
  bool real_gpu = !simulated && have_busy;
  std::printf("pinpoint demo on %s\n",
              simulated ? "a SIMULATED node (no NVIDIA GPU found): jobs are timed sleeps standing "
                          "in for trainings"
                        : ("a real node: " + gpus->backend + ", driver " + gpus->driver).c_str());
  if (!simulated && !have_busy)
    std::printf("(pp-busy was not built: no nvcc; jobs are timed sleeps)\n");
  size_t n_dev = gpus->devices.size();
  for (const auto& dev : gpus->devices)
    std::printf("  device %d: %s %s (%s)\n", dev.index, dev.uuid.c_str(), dev.name.c_str(),
                pinpoint::FormatSize(dev.mem_bytes).c_str());
  size_t whole_gpus = 0;
  for (const auto& dev : gpus->devices) whole_gpus += dev.is_mig ? 0 : 1;
  auto batch = Batch(whole_gpus);
  std::printf(
      "\nbatch: %zu jobs: 24 slices of 4-8 GiB, 3 whole-GPU jobs%s\n", batch.size(),
      whole_gpus >= 2
          ? (", 1 job on " + std::to_string(std::min<size_t>(whole_gpus, 4)) + " GPUs").c_str()
          : " (no multi-GPU job: this node has one GPU)");
  std::printf("\n1) pinpoint packs slices onto shared GPUs (mode mps):\n");
  RunResult packed;
  bool ok = RunBatch(bin_dir, d, batch, real_gpu, true, &packed);
  StopDaemon(&d);
  if (!ok) return 1;

  std::printf(
      "\n2) the same batch with one job per GPU (mode exclusive, what a batch system does)...\n");
  Daemon ex;
  if (!StartDaemon(bin_dir, state_dir + "/exclusive", "exclusive", &ex)) return 1;
  RunResult exclusive;
  ok = RunBatch(bin_dir, ex, batch, real_gpu, false, &exclusive);
  StopDaemon(&ex);
  if (!ok) return 1;

  std::printf("\nsummary%s\n", simulated ? " (SIMULATED node)" : "");
  std::printf("  jobs done:            %d completed, %d failed, of %zu\n", packed.completed,
              packed.failed, batch.size());
  std::printf("  makespan, pinpoint:   %.1f s\n", packed.makespan_s);
  std::printf("  makespan, 1 job/GPU:  %.1f s  (%.1fx longer)\n", exclusive.makespan_s,
              packed.makespan_s > 0 ? exclusive.makespan_s / packed.makespan_s : 0.0);
  std::printf(
      "  GPU time, pinpoint:   %.4f GPU-hours (%.1f GPU-s: the time GPUs held a job, summed over "
      "GPUs)\n",
      packed.busy_gpu_s / 3600, packed.busy_gpu_s);
  std::printf("  GPU time, 1 job/GPU:  %.4f GPU-hours (%.1f GPU-s, %.1fx more)\n",
              exclusive.busy_gpu_s / 3600, exclusive.busy_gpu_s,
              packed.busy_gpu_s > 0 ? exclusive.busy_gpu_s / packed.busy_gpu_s : 0.0);
  std::printf("  peak jobs per GPU:   ");
  for (size_t i = 0; i < n_dev; ++i)
    std::printf(" GPU%zu=%d", i, packed.peak_per_device[static_cast<int>(i)]);
  std::printf("\n");
  bool all_done = packed.completed == static_cast<int>(batch.size()) &&
                  exclusive.completed == static_cast<int>(batch.size());
  if (!all_done) {
    std::printf("  some jobs failed: see %s/*/state/jobs/*/stderr\n", state_dir.c_str());
    return 1;
  }
  // What to do next, from this build: both demo daemons have stopped.
  const char* bin = bin_dir.c_str();
  std::printf("\nnext: a pinpointd of your own from this build (%s), then jobs through it:\n",
              simulated ? "a simulated node here, as in this demo" : "this node's GPUs");
  std::printf("  %s/pinpointd --state-dir /tmp/pinpoint --socket /tmp/pinpoint.sock &\n", bin);
  std::printf("  export PINPOINT_SOCKET=/tmp/pinpoint.sock\n");
  std::printf("  %s/pinpoint submit --gpu-mem 4G --wait -- echo hello\n", bin);
  std::printf("  %s/pinpoint gpus\n", bin);
  std::string packages = (bin_dir.rfind('/', 0) == 0 ? "" : "./") + bin_dir + "/packages";
  std::printf(
      "or install it as a service: make package, then apt install %s/pinpoint_*.deb "
      "(docs/admin.md)\n",
      packages.c_str());
  return 0;
}
