#include "bench/driver/workload.h"

#include <unistd.h>

#include <cstdlib>
#include <map>
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

namespace {

// The lines of `output` that start with `tag` ("pp-work "), each as its KEY=VALUE fields.
std::vector<std::map<std::string, std::string>> TaggedLines(const std::string& output,
                                                            const std::string& tag) {
  std::vector<std::map<std::string, std::string>> found;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(tag, 0) != 0) continue;
    std::istringstream words(line.substr(tag.size()));
    std::map<std::string, std::string> fields;
    std::string word;
    while (words >> word) {
      size_t eq = word.find('=');
      if (eq != std::string::npos) fields[word.substr(0, eq)] = word.substr(eq + 1);
    }
    found.push_back(std::move(fields));
  }
  return found;
}

// The whole of `text` as a number, or nullopt.
std::optional<double> Number(const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end == text.c_str() || *end != '\0') return std::nullopt;
  return v;
}

}  // namespace

std::optional<WorkReport> ParseWorkLine(const std::string& output) {
  std::optional<WorkReport> last;
  for (auto& fields : TaggedLines(output, "pp-work ")) {
    std::optional<double> units = Number(fields["units"]);
    if (!units || *units < 0 || fields["unit"].empty()) continue;
    last = WorkReport{*units, fields["unit"], Number(fields["seconds"]).value_or(0)};
  }
  return last;
}

std::optional<CudaStart> ParseCudaLine(const std::string& output) {
  for (auto& fields : TaggedLines(output, "pp-cuda ")) {
    std::optional<double> first_us = Number(fields["first_us"]),
                          ready_us = Number(fields["ready_us"]);
    if (first_us && ready_us && *first_us > 0 && *ready_us > 0)
      return CudaStart{*first_us / 1e6, *ready_us / 1e6};
  }
  return std::nullopt;
}

}  // namespace pinpoint::bench
