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

std::vector<GpuProcess> DeclaredGpuProcesses(const std::string& gpu_uuid, const std::string& node) {
  std::vector<GpuProcess> out;
  for (int64_t pid : ListPids()) {
    auto bytes = DeclaredGpuMem(ReadEnviron(pid), gpu_uuid, node);
    if (!bytes || !ProcessAlive(pid)) continue;
    GpuProcess p;
    p.pid = pid;
    p.used_bytes = *bytes;
    out.push_back(p);
  }
  return out;
}

}  // namespace pinpoint::gpu
