#include "bench/driver/workload.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace pinpoint::bench {

namespace {

constexpr uint64_t kGiB = 1ull << 30;

bool Executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }
bool Readable(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

}  // namespace

Result<Workload> MakeWorkload(const BenchOptions& options, const std::string& bin_dir,
                              const std::string& cwd) {
  Workload w;
  w.name = options.workload;
  const std::vector<std::string>& extra = options.workload_args;
  if (w.name == "busy") {
    w.argv = {bin_dir + "/pp-busy"};
    if (extra.empty()) w.argv.insert(w.argv.end(), {"--blocks", "4", "--iters", "500000000"});
    w.gpu_mem_bytes = kGiB;
  } else if (w.name == "mlp") {
    w.argv = {bin_dir + "/pp-mlp"};
    w.gpu_mem_bytes = 2 * kGiB;
  } else if (w.name == "torch") {
    std::string script = options.torch_script;
    if (script.empty()) {
      script = "bench/workloads/train.py";
      if (!Readable(cwd + "/" + script) && Readable(bin_dir + "/train.py"))
        script = bin_dir + "/train.py";
    }
    if (!script.empty() && script[0] != '/') script = cwd + "/" + script;
    if (!Readable(script))
      return NotFound("no PyTorch workload at " + script + " (give --torch-script)");
    w.argv = {options.python, script};
    w.gpu_mem_bytes = 4 * kGiB;
  } else if (w.name == "cmd") {
    if (extra.empty()) return InvalidArgument("--workload cmd needs the command after --");
    w.gpu_mem_bytes = kGiB;
  } else {
    return InvalidArgument("unknown workload '" + w.name + "'");
  }
  if ((w.name == "busy" || w.name == "mlp") && !Executable(w.argv[0])) {
    return NotFound("no " + w.argv[0] +
                    " (CUDA workloads are built only where nvcc is; give --bin-dir)");
  }
  w.argv.insert(w.argv.end(), extra.begin(), extra.end());
  if (options.gpu_mem_bytes > 0) w.gpu_mem_bytes = options.gpu_mem_bytes;
  return w;
}

std::optional<WorkReport> ParseWorkLine(const std::string& output) {
  std::optional<WorkReport> last;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("pp-work ", 0) != 0) continue;
    std::istringstream fields(line.substr(8));
    std::string field;
    WorkReport r;
    bool units = false, unit = false;
    while (fields >> field) {
      size_t eq = field.find('=');
      if (eq == std::string::npos) continue;
      std::string key = field.substr(0, eq), value = field.substr(eq + 1);
      char* end = nullptr;
      if (key == "units") {
        r.units = std::strtod(value.c_str(), &end);
        units = end != value.c_str() && *end == '\0' && r.units >= 0;
      } else if (key == "unit") {
        r.unit = value;
        unit = !value.empty();
      } else if (key == "seconds") {
        r.seconds = std::strtod(value.c_str(), &end);
        if (end == value.c_str() || *end != '\0') r.seconds = 0;
      }
    }
    if (units && unit) last = r;
  }
  return last;
}

std::optional<CudaStart> ParseCudaLine(const std::string& output) {
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("pp-cuda ", 0) != 0) continue;
    std::istringstream fields(line.substr(8));
    std::string field;
    long long first_us = 0, ready_us = 0;
    while (fields >> field) {
      size_t eq = field.find('=');
      if (eq == std::string::npos) continue;
      std::string key = field.substr(0, eq), value = field.substr(eq + 1);
      char* end = nullptr;
      long long v = std::strtoll(value.c_str(), &end, 10);
      if (end == value.c_str() || *end != '\0') v = 0;
      if (key == "first_us") first_us = v;
      if (key == "ready_us") ready_us = v;
    }
    if (first_us > 0 && ready_us > 0) return CudaStart{first_us / 1e6, ready_us / 1e6};
  }
  return std::nullopt;
}

}  // namespace pinpoint::bench
