#include "gpu/declared_usage.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

#include "common/file_util.h"
#include "common/process.h"
#include "pinpoint/units.h"

namespace pinpoint::gpu {

namespace {

std::string EnvValue(const std::string& text, std::string_view name) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\0', start);
    if (end == std::string::npos) end = text.size();
    std::string_view entry(text.data() + start, end - start);
    if (entry.size() > name.size() && entry.substr(0, name.size()) == name &&
        entry[name.size()] == '=')
      return std::string(entry.substr(name.size() + 1));
    start = end + 1;
  }
  return "";
}

std::string ReadEnviron(int64_t pid) {
  constexpr size_t kMax = 256 * 1024;
  UniqueFd fd(::open(("/proc/" + std::to_string(pid) + "/environ").c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return "";
  std::string out;
  char buf[8192];
  while (out.size() < kMax) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace

std::optional<uint64_t> DeclaredGpuMem(const std::string& text, const std::string& gpu_uuid,
                                       const std::string& node) {
  std::string mem = EnvValue(text, "PINPOINT_SIMULATED_GPU_MEM");
  if (mem.empty()) return std::nullopt;
  std::string named = EnvValue(text, kSimulatedNodeVar);
  if (!named.empty() && named != node) return std::nullopt;  // another simulated node's
  std::string visible = EnvValue(text, "CUDA_VISIBLE_DEVICES");
  std::string first = visible.substr(0, visible.find(','));
  if (first.empty() || gpu_uuid.empty()) return std::nullopt;
  if (first != gpu_uuid) return std::nullopt;  // MIG instances are not simulated this way
  auto bytes = ParseSize(mem);
  if (!bytes.ok()) return std::nullopt;
  return *bytes;
}

namespace {

// Start ticks (field 22) and the environment's bounds (fields 50 and 51) of a /proc/<pid>/stat
// line: what changes when the process is another, or runs another program. "" when unreadable.
std::string LayoutOf(int64_t pid) {
  std::string line = ReadProcFileBounded(pid, "stat", 4096);
  auto close = line.rfind(')');
  if (close == std::string::npos) return "";
  std::string out;
  size_t at = close + 1;
  for (int field = 2; at < line.size(); ++field) {
    size_t start = line.find_first_not_of(" \n", at);
    if (start == std::string::npos) break;
    size_t end = line.find_first_of(" \n", start);
    if (end == std::string::npos) end = line.size();
    if (field == 3 && line.compare(start, end - start, "Z") == 0) return "";  // a zombie
    if (field == 22 || field == 50 || field == 51) out += line.substr(start, end - start) + " ";
    at = end;
  }
  return out;
}

// The variables a declaration is made of, as NUL-terminated entries (DeclaredGpuMem reads them).
std::string DeclaringPart(const std::string& environ) {
  static constexpr std::string_view kNames[] = {"PINPOINT_SIMULATED_GPU_MEM", kSimulatedNodeVar,
                                                "CUDA_VISIBLE_DEVICES"};
  std::string out;
  for (std::string_view name : kNames) {
    std::string value = EnvValue(environ, name);
    if (!value.empty()) out += std::string(name) + "=" + value + '\0';
  }
  return out.find("PINPOINT_SIMULATED_GPU_MEM=") == std::string::npos ? "" : out;
}

}  // namespace

std::vector<GpuProcess> DeclaredUsage::For(const std::string& gpu_uuid, const std::string& node) {
  std::vector<GpuProcess> out;
  std::lock_guard<std::mutex> lock(mu_);
  std::map<int64_t, Program> alive;
  for (int64_t pid : ListPids()) {
    std::string layout = LayoutOf(pid);
    if (layout.empty()) continue;
    auto known = programs_.find(pid);
    Program program;
    if (known != programs_.end() && known->second.layout == layout) {
      program = std::move(known->second);
    } else {
      program.layout = layout;
      program.environ = DeclaringPart(ReadEnviron(pid));
    }
    if (!program.environ.empty()) {
      if (auto bytes = DeclaredGpuMem(program.environ, gpu_uuid, node)) {
        GpuProcess p;
        p.pid = pid;
        p.used_bytes = *bytes;
        out.push_back(p);
      }
    }
    alive.emplace(pid, std::move(program));
  }
  programs_ = std::move(alive);
  return out;
}

}  // namespace pinpoint::gpu
