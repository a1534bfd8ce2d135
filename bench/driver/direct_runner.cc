#include "bench/driver/direct_runner.h"

#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "bench/driver/proc.h"
#include "common/file_util.h"

namespace pinpoint::bench {

namespace {

// The last non-empty line of `text`, for a failure's detail.
std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of("\n\r ");
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1) + 1);
}

// At most the first max_bytes of the file at `path`; "" when it cannot be read.
std::string ReadHead(const std::string& path, uint64_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  std::string head(max_bytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(max_bytes));
  head.resize(static_cast<size_t>(in.gcount()));
  return head;
}

}  // namespace

DirectRunner::DirectRunner(Mode mode, const RunnerContext* ctx) : mode_(mode), ctx_(ctx) {}

// One GPU keeps the directory names of a single control daemon ("p", "l").
std::string DirectRunner::PipeDir(size_t gpu) const {
  return dir_ + "/p" + (gpu == 0 ? "" : std::to_string(gpu));
}
std::string DirectRunner::LogDir(size_t gpu) const {
  return dir_ + "/l" + (gpu == 0 ? "" : std::to_string(gpu));
}

Status DirectRunner::Setup() {
  dir_ = ctx_->scratch_dir + (mode_ == Mode::kBareMps ? "/bm" : "/ba");
  PP_RETURN_IF_ERROR(MakeDirs(dir_));
  if (mode_ != Mode::kBareMps) return Status::Ok();
  for (size_t gpu = 0; gpu < ctx_->gpu_uuids.size(); ++gpu) {
    PP_RETURN_IF_ERROR(MakeDirs(PipeDir(gpu)));
    PP_RETURN_IF_ERROR(MakeDirs(LogDir(gpu)));
    // "-d" forks the daemon and returns; its first process is waited for, its output kept in a
    // file (a pipe would be held open by the daemon).
    SpawnSpec spec;
    spec.argv = {ctx_->options.mps_control, "-d"};
    spec.env = ChildEnvironment({"CUDA_MPS_PIPE_DIRECTORY=" + PipeDir(gpu),
                                 "CUDA_MPS_LOG_DIRECTORY=" + LogDir(gpu),
                                 "CUDA_VISIBLE_DEVICES=" + ctx_->gpu_uuids[gpu]});
    spec.stdout_path = dir_ + "/control-start-" + std::to_string(gpu) + ".txt";
    spec.stderr_path = spec.stdout_path;
    Result<pid_t> pid = Spawn(spec);
    if (!pid.ok()) return pid.status();
    int status = -1;
    Status waited = WaitAll({*pid}, ctx_->stop, [&](size_t, int s, double) { status = s; });
    if (!waited.ok()) return waited;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      Result<std::string> out = ReadFile(spec.stdout_path);
      return Unavailable("'" + ctx_->options.mps_control + " -d' failed for GPU " +
                         ctx_->gpu_uuids[gpu] + ": " +
                         (out.ok() ? LastLine(*out) : std::string("no output")));
    }
    mps_started_ = gpu + 1;
  }
  return Status::Ok();
}

Result<BatchResult> DirectRunner::Run(int n, const std::string& tag) {
  // The environment of a copy on each GPU.
  std::vector<std::vector<std::string>> envs;
  for (size_t gpu = 0; gpu < ctx_->gpu_uuids.size(); ++gpu) {
    std::vector<std::string> extra = {"CUDA_VISIBLE_DEVICES=" + ctx_->gpu_uuids[gpu]};
    if (mode_ == Mode::kBareMps) {
      extra.push_back("CUDA_MPS_PIPE_DIRECTORY=" + PipeDir(gpu));
      extra.push_back("CUDA_MPS_LOG_DIRECTORY=" + LogDir(gpu));
    }
    envs.push_back(ChildEnvironment(extra));
  }
  BatchResult batch;
  batch.jobs.resize(static_cast<size_t>(n));
  std::vector<pid_t> pids;
  std::vector<std::string> outs;
  batch.t0_s = NowSeconds();
  for (int i = 0; i < n; ++i) {
    SpawnSpec spec;
    size_t gpu = static_cast<size_t>(i) % envs.size();
    spec.argv = ctx_->workload.argv;
    spec.env = envs[gpu];
    spec.stdout_path = dir_ + "/" + tag + "-" + std::to_string(i) + ".out";
    spec.stderr_path = dir_ + "/" + tag + "-" + std::to_string(i) + ".err";
    std::filesystem::remove(spec.stdout_path);
    std::filesystem::remove(spec.stderr_path);
    JobResult& job = batch.jobs[static_cast<size_t>(i)];
    job.submit_s = job.start_s = NowSeconds();  // no submission: spawned
    job.device = ctx_->gpu_uuids[gpu];
    PP_RETURN_IF_ERROR(SpawnIntoBatch(spec, &pids));
    outs.push_back(spec.stdout_path);
  }
  std::vector<int> status(pids.size(), -1);
  Status waited = WaitAll(pids, ctx_->stop, [&](size_t i, int s, double t) {
    status[i] = s;
    batch.jobs[i].end_s = batch.jobs[i].known_s = t;  // reaped: the end is known as it is seen
  });
  batch.t1_s = NowSeconds();
  if (!waited.ok()) {
    KillAndReap(pids, SIGTERM, 5000);
    return waited;
  }
  for (size_t i = 0; i < pids.size(); ++i) {
    JobResult& job = batch.jobs[i];
    // Bounded reads: the head for the pp-cuda line, the tail for the pp-work line.
    std::optional<CudaStart> cuda = ParseCudaLine(ReadHead(outs[i], kOutputHeadBytes));
    if (cuda) {
      job.first_cuda_s = cuda->first_s;
      job.ready_s = cuda->ready_s;
    }
    Result<std::string> out = ReadFileTail(outs[i], kOutputTailBytes);
    std::optional<WorkReport> work = out.ok() ? ParseWorkLine(*out) : std::nullopt;
    bool exit0 = WIFEXITED(status[i]) && WEXITSTATUS(status[i]) == 0;
    if (work) {
      job.units = work->units;
      job.unit = work->unit;
      job.own_seconds = work->seconds;
    }
    job.ok = exit0 && work.has_value();
    if (!job.ok) {
      Result<std::string> err =
          ReadFileTail(dir_ + "/" + tag + "-" + std::to_string(i) + ".err", kOutputTailBytes);
      std::string why = WIFEXITED(status[i])
                            ? "exit code " + std::to_string(WEXITSTATUS(status[i]))
                            : "killed by signal " + std::to_string(WTERMSIG(status[i]));
      if (exit0) why = "no pp-work line in its output";
      std::string last = err.ok() ? LastLine(*err) : "";
      if (last.empty() && out.ok()) last = LastLine(*out);
      job.detail = why + (last.empty() ? "" : ": " + last);
    }
  }
  return batch;
}

void DirectRunner::Teardown() {
  size_t started = mps_started_;
  mps_started_ = 0;
  for (size_t gpu = 0; gpu < started; ++gpu) {
    std::string problem = QuitMpsControl(ctx_->options.mps_control, PipeDir(gpu));
    if (!problem.empty()) std::cerr << "pinpoint bench: bare-mps: " << problem << "\n";
  }
}

void DirectRunner::SaveLogs(const std::string& dir) {
  if (mode_ != Mode::kBareMps || dir_.empty()) return;
  std::error_code ignored;
  for (size_t gpu = 0; gpu < ctx_->gpu_uuids.size(); ++gpu) {
    std::string prefix = dir + "/bare-mps-" + (gpu == 0 ? "" : std::to_string(gpu) + "-");
    for (const char* name : {"control.log", "server.log"}) {
      std::filesystem::copy_file(LogDir(gpu) + "/" + name, prefix + name,
                                 std::filesystem::copy_options::overwrite_existing, ignored);
    }
  }
}

}  // namespace pinpoint::bench
