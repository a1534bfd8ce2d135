#include "bench/driver/bench_cli.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <ostream>

#include "bench/driver/campaign.h"
#include "bench/driver/direct_runner.h"
#include "bench/driver/pinpoint_runner.h"
#include "bench/driver/proc.h"
#include "bench/driver/report.h"
#include "gpu/backend_factory.h"

namespace pinpoint::bench {

namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop = true; }

void CatchStopSignals() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

std::string ExeDir() {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

std::string Absolute(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

std::string UtcNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// "13.0" from nvidia-smi's banner ("CUDA Version: 13.0"), or "unknown".
std::string CudaVersionFromNvidiaSmi() {
  Result<CommandResult> r = RunCommand({"nvidia-smi"}, ChildEnvironment(), 15000);
  if (!r.ok() || r->exit_code != 0) return "unknown";
  size_t at = r->out.find("CUDA Version:");
  if (at == std::string::npos) return "unknown";
  size_t start = r->out.find_first_not_of(' ', at + 13);
  size_t end = r->out.find_first_of(" |\n", start);
  return start == std::string::npos ? "unknown" : r->out.substr(start, end - start);
}

std::string WorkloadLine(const Workload& w) {
  std::vector<std::string> argv = w.argv;
  if (!argv.empty()) argv[0] = std::filesystem::path(argv[0]).filename().string();
  if (w.name == "torch" && argv.size() > 1)
    argv[1] = std::filesystem::path(argv[1]).filename().string();
  return ShellLine(argv);
}

// The GPU to measure, from the backend. Errors: one line for a person, and the exit code.
struct Failure {
  std::string line;
  int exit_code = 1;
};

Result<gpu::GpuInfo> FindGpu(gpu::GpuBackend* backend, int index, Failure* failure) {
  Result<std::vector<gpu::GpuInfo>> gpus = backend->Inventory();
  if (!gpus.ok() || gpus->empty()) {
    failure->line = "needs an NVIDIA GPU with NVML (" +
                    (gpus.ok() ? std::string("NVML lists no GPU") : gpus.status().message()) + ")";
    return Unavailable(failure->line);
  }
  for (const gpu::GpuInfo& g : *gpus) {
    if (g.index != index) continue;
    if (g.mig_enabled) {
      failure->line =
          "GPU " + std::to_string(index) + " is in MIG mode; the benchmark measures whole GPUs";
      return FailedPrecondition(failure->line);
    }
    return g;
  }
  failure->line =
      "no GPU " + std::to_string(index) + " (this node has " + std::to_string(gpus->size()) + ")";
  failure->exit_code = 2;
  return NotFound(failure->line);
}

// Everything the run needs before it starts, checked; or why it cannot run.
Status CheckBinaries(const BenchOptions& options, const std::string& bin_dir) {
  for (Mode m : options.modes) {
    if (!ThroughPinpoint(m)) continue;
    for (const char* name : {"pinpointd", "pinpoint-shim"}) {
      if (::access((bin_dir + "/" + name).c_str(), X_OK) != 0) {
        return NotFound("no " + bin_dir + "/" + name + " (give --bin-dir)");
      }
    }
  }
  return Status::Ok();
}

// The GPUs of options.gpus, found and of one model. Errors: one line for a person, and the exit
// code.
Result<std::vector<gpu::GpuInfo>> FindGpus(gpu::GpuBackend* backend,
                                           const std::vector<int>& indexes, Failure* failure) {
  std::vector<gpu::GpuInfo> found;
  for (int index : indexes) {
    Result<gpu::GpuInfo> g = FindGpu(backend, index, failure);
    if (!g.ok()) return g.status();
    if (!found.empty() && g->name != found[0].name) {
      failure->line = "GPU " + std::to_string(found[0].index) + " (" + found[0].name +
                      ") and GPU " + std::to_string(index) + " (" + g->name +
                      ") are different models; measure them one at a time";
      failure->exit_code = 2;
      return FailedPrecondition(failure->line);
    }
    found.push_back(*g);
  }
  return found;
}

RunMeta MakeMeta(const BenchOptions& options, const std::vector<gpu::GpuInfo>& targets,
                 gpu::GpuBackend* backend, const Workload& workload,
                 const std::vector<std::string>& args) {
  const gpu::GpuInfo& target = targets.front();
  RunMeta meta;
  meta.gpu_name = target.name;
  meta.gpu_uuid = target.uuid;
  meta.gpu_index = target.index;
  for (const gpu::GpuInfo& g : targets) {
    meta.gpu_indices.push_back(g.index);
    meta.gpu_uuids.push_back(g.uuid);
  }
  meta.sm_count = target.sm_count;
  meta.gpu_mem_bytes = target.mem_total_bytes;
  meta.driver = backend->DriverVersion();
  meta.cuda = !options.cuda_version.empty() ? options.cuda_version
              : options.backend == "nvml"   ? CudaVersionFromNvidiaSmi()
                                            : "unknown";
  meta.backend = backend->Kind();
  meta.date_utc = UtcNow();
  meta.host_cpus = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  meta.pinpoint_version = PINPOINT_VERSION;
  meta.command_line = "pinpoint bench " + ShellLine(args);
  meta.workload_line = WorkloadLine(workload);
  return meta;
}

void PrintPlan(const BenchOptions& options, const RunMeta& meta, std::ostream& out) {
  out << "pinpoint bench: " << options.workload << " on " << MetaLine(meta) << "\n"
      << "  one copy: " << meta.workload_line << "\n"
      << "  modes:";
  for (Mode m : options.modes) {
    out << " " << ModeName(m) << " (N=";
    std::vector<int> ns = NValuesFor(options, m);
    for (size_t i = 0; i < ns.size(); ++i) out << (i ? "," : "") << ns[i];
    out << ")";
  }
  int at1 = RepsAt(options, 1);
  out << "; " << options.reps << " rep" << (options.reps == 1 ? "" : "s")
      << (at1 > options.reps ? " (" + std::to_string(at1) + " at N=1)" : "") << "; results in "
      << options.out_dir << std::endl;
}

void PrintTargets(const BenchOptions& options, const std::vector<PointResult>& points,
                  std::ostream& out) {
  for (const TargetResult& t :
       EvaluateTargets(Summarize(points, options.modes), options.target_n)) {
    const char* word = !t.known ? "n/a   " : t.info ? "info  " : t.met ? "MET   " : "MISSED";
    out << "  " << word << " " << t.name << (t.known ? ": " + t.measured : "") << "\n";
  }
}

// Runs the campaign with every runner and the sampler, writing results after each point.
// Returns the campaign's status; *written says whether the final files were written.
Status Measure(const BenchOptions& options, const RunnerContext& ctx, GpuSampler* sampler,
               RunMeta* meta, std::ostream& out, std::ostream& err, Status* written) {
  std::vector<std::unique_ptr<BatchRunner>> owned;
  std::map<Mode, BatchRunner*> runners;
  for (Mode m : options.modes) {
    if (ThroughPinpoint(m)) {
      owned.push_back(std::make_unique<PinpointRunner>(m, &ctx));
    } else {
      owned.push_back(std::make_unique<DirectRunner>(m, &ctx));
    }
    runners[m] = owned.back().get();
  }
  std::vector<PointResult> points;
  bool write_failed = false;
  CampaignHooks hooks;
  hooks.on_point = [&](const std::vector<PointResult>& so_far) {
    Status s = WriteResults(options.out_dir, *meta, options, ctx.workload, so_far);
    if (!s.ok() && !write_failed) {
      err << "pinpoint bench: cannot write results: " << s.message() << "\n";
      write_failed = true;
    }
  };
  Status result =
      RunCampaign(options, runners, sampler, options.workload, hooks, out, &g_stop, &points);
  sampler->Stop();
  std::string logs = options.out_dir + "/logs";
  std::error_code ec;
  std::filesystem::create_directories(logs, ec);
  for (auto& r : owned) r->SaveLogs(logs);
  meta->interrupted = g_stop.load();
  if (!result.ok()) meta->error = result.message();
  *written = WriteResults(options.out_dir, *meta, options, ctx.workload, points);
  PrintTargets(options, points, out);
  return result;
}

}  // namespace

int RunBenchCli(int argc, char** argv, std::ostream& out, std::ostream& err) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string help;
  Result<BenchOptions> parsed = ParseBenchArgs(args, &help);
  if (!parsed.ok()) {
    err << "pinpoint bench: " << parsed.status().message() << "\n";
    return 2;
  }
  if (!help.empty()) {
    out << help;
    return 0;
  }
  BenchOptions options = *parsed;
  std::string bin_dir = Absolute(options.bin_dir.empty() ? ExeDir() : options.bin_dir);
  options.out_dir = Absolute(options.out_dir);
  std::string why;
  Result<std::unique_ptr<gpu::GpuBackend>> backend = gpu::MakeGpuBackend(options.backend, &why);
  if (!backend.ok()) {
    err << "pinpoint bench: needs an NVIDIA GPU with NVML (" << backend.status().message() << ")\n";
    return 1;
  }
  Failure failure;
  Result<std::vector<gpu::GpuInfo>> targets = FindGpus(backend->get(), options.gpus, &failure);
  if (!targets.ok()) {
    err << "pinpoint bench: " << failure.line << "\n";
    return failure.exit_code;
  }
  Result<Workload> workload = MakeWorkload(options, bin_dir, Absolute("."));
  Status binaries = workload.ok() ? CheckBinaries(options, bin_dir) : workload.status();
  if (!binaries.ok()) {
    err << "pinpoint bench: " << binaries.message() << "\n";
    return 1;
  }
  options.gpu_mem_bytes = workload->gpu_mem_bytes;
  std::string scratch = options.scratch + "/ppb-XXXXXX";
  if (::mkdtemp(scratch.data()) == nullptr) {
    err << "pinpoint bench: cannot make a scratch directory in " << options.scratch << "\n";
    return 1;
  }
  RunMeta meta = MakeMeta(options, *targets, backend->get(), *workload, args);
  RunnerContext ctx{options, *workload, bin_dir, scratch, meta.gpu_uuids, &g_stop};
  GpuSampler sampler(backend->get(), options.gpus, options.sample_ms);
  Status sampling = sampler.Start();
  if (!sampling.ok()) {
    err << "pinpoint bench: cannot read the GPUs measured: " << sampling.message() << "\n";
    return 1;
  }
  CatchStopSignals();
  PrintPlan(options, meta, out);
  Status written;
  Status result = Measure(options, ctx, &sampler, &meta, out, err, &written);
  std::error_code ec;
  if (!options.keep_scratch) std::filesystem::remove_all(scratch, ec);
  if (!written.ok()) {
    err << "pinpoint bench: cannot write results: " << written.message() << "\n";
    return 1;
  }
  out << "results: " << options.out_dir << "/results.md (plots: bench/plot.sh " << options.out_dir
      << ")\n";
  if (!result.ok()) {
    err << "pinpoint bench: " << result.message() << "\n";
    return 1;
  }
  return meta.interrupted ? 130 : 0;
}

}  // namespace pinpoint::bench
