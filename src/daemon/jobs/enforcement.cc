#include "daemon/jobs/enforcement.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <optional>

#include "common/cpu_list.h"
#include "pinpoint/time_limit.h"
#include "pinpoint/units.h"

namespace pinpoint::daemon {

namespace {

constexpr char kHeld[] = "held";
constexpr char kExceeded[] = "exceeded";
constexpr char kDisagrees[] = "disagrees";
constexpr char kNotSeen[] = "not seen";
constexpr char kNotRead[] = "not read";
constexpr char kNotMeasurable[] = "not measurable";

std::optional<int64_t> Number(std::string_view text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

bool HasMps(const JobRecord& job) {
  return std::any_of(job.allocations.begin(), job.allocations.end(),
                     [](const Allocation& a) { return a.mode == SharingMode::kMps; });
}

std::string Plural(int64_t n, const char* one) {
  return std::to_string(n) + " " + one + (n == 1 ? "" : "s");
}

std::string NotReadEnv(const JobRecord& job) {
  return job.end_ms == 0 ? "not read yet: no process of it seen"
                         : "not read: no process of it was seen carrying its environment";
}

Enforcement Devices(const JobRecord& job) {
  const JobRequest& r = job.request;
  const Readback& b = job.readback;
  Enforcement e{.resource = "devices"};
  e.asked = r.gpus == 1 && r.gpu_mem_bytes > 0 ? "a slice of 1 GPU" : Plural(r.gpus, "GPU");
  std::string given;
  for (const Allocation& a : job.allocations) given += (given.empty() ? "" : ",") + a.uuid;
  if (!b.env_read) {
    e.applied = NotReadEnv(job);
    e.verdict = kNotSeen;
  } else {
    e.applied = "CUDA_VISIBLE_DEVICES=" + b.visible_devices;
    e.verdict = b.visible_devices == given ? kHeld : kDisagrees;
  }
  std::string seen;
  for (int gpu : b.gpus_seen) seen += (seen.empty() ? "GPU " : ", ") + std::to_string(gpu);
  e.observed = seen.empty() ? "none seen" : seen + " (NVML)";
  return e;
}

// The bytes of an MPS pinned limit, "0=3072M" (each device of the client the same), or nullopt.
std::optional<uint64_t> PinnedBytes(const std::string& value) {
  std::optional<uint64_t> bytes;
  size_t at = 0;
  while (at <= value.size()) {
    size_t comma = std::min(value.find(',', at), value.size());
    std::string item = value.substr(at, comma - at);
    size_t eq = item.find('=');
    if (eq == std::string::npos) return std::nullopt;
    auto size = ParseSize(item.substr(eq + 1));
    if (!size.ok() || (bytes && *bytes != *size)) return std::nullopt;
    bytes = *size;
    at = comma + 1;
  }
  return bytes;
}

Enforcement GpuMem(const JobRecord& job) {
  const JobRequest& r = job.request;
  const Readback& b = job.readback;
  Enforcement e{.resource = "gpu_mem"};
  e.asked = r.gpu_mem_bytes > 0 ? FormatSize(r.gpu_mem_bytes) : "whole device";
  bool disagrees = false;
  if (!HasMps(job)) {
    e.applied = r.gpu_mem_bytes > 0
                    ? "no hardware limit outside MPS: pinpointd's watcher stops it above " +
                          FormatSize(r.gpu_mem_bytes)
                    : "whole device";
  } else if (!b.env_read) {
    e.applied = NotReadEnv(job);
  } else if (b.pinned_mem_limit.empty()) {
    e.applied = "no MPS pinned limit in its environment";
    disagrees = r.gpu_mem_bytes > 0;
  } else {
    e.applied = "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=" + b.pinned_mem_limit;
    // The limit is set in whole MiB, rounded down (never above what was asked).
    std::optional<uint64_t> pinned = PinnedBytes(b.pinned_mem_limit);
    uint64_t want = std::max<uint64_t>(r.gpu_mem_bytes >> 20, 1) << 20;
    disagrees = !pinned || r.gpu_mem_bytes == 0 || *pinned != want;
  }
  const JobUsage& u = job.usage;
  if (u.samples == 0)
    e.observed = "none seen";
  else if (u.gpu_mem_peak_bytes == 0)
    e.observed = "nothing of it on its GPUs (NVML)";
  else
    e.observed = "peak " + FormatSize(u.gpu_mem_peak_bytes) + " (NVML)";
  if (job.stop_reason == Reason::kGpuMemExceeded ||
      (r.gpu_mem_bytes > 0 && u.samples > 0 && u.gpu_mem_peak_bytes > r.gpu_mem_bytes))
    e.verdict = kExceeded;
  else if (disagrees)
    e.verdict = kDisagrees;
  // Under MPS the limit is held once it is read back as asked, used or not (an allocation past
  // it is refused); outside MPS the watcher's budget holds only what it saw.
  else if (HasMps(job))
    e.verdict = b.env_read ? kHeld : kNotSeen;
  else
    e.verdict = u.samples > 0 ? kHeld : kNotSeen;
  return e;
}

Enforcement GpuShare(const JobRecord& job) {
  const JobRequest& r = job.request;
  const Readback& b = job.readback;
  Enforcement e{.resource = "gpu_share"};
  e.asked = r.gpu_share_pct > 0 ? std::to_string(r.gpu_share_pct) + "% of SMs" : "none";
  if (!HasMps(job)) {
    e.applied = "no SM cap outside MPS";
    e.observed = job.usage.util_pct_mean >= 0
                     ? "GPU utilisation " + std::to_string(job.usage.util_pct_mean) + "% mean"
                     : "not measured";
    e.verdict = r.gpu_share_pct > 0 ? kDisagrees : kHeld;
    return e;
  }
  e.observed = "not measurable under MPS: NVML reports no SM use per MPS client";
  if (!b.env_read) {
    e.applied = NotReadEnv(job);
    e.verdict = kNotSeen;
    return e;
  }
  e.applied = b.active_thread_pct.empty()
                  ? "no MPS active thread percentage in its environment"
                  : "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=" + b.active_thread_pct;
  std::optional<int64_t> pct = Number(b.active_thread_pct);
  bool agrees = r.gpu_share_pct > 0 ? pct && *pct == r.gpu_share_pct : b.active_thread_pct.empty();
  e.verdict = agrees ? kNotMeasurable : kDisagrees;
  return e;
}

// The CPUs cpu.max allows ("200000 100000": 2), or nullopt for "max" and what does not parse.
std::optional<double> CpuMaxCpus(const std::string& cpu_max) {
  size_t space = cpu_max.find(' ');
  if (space == std::string::npos) return std::nullopt;
  auto quota = Number(std::string_view(cpu_max).substr(0, space));
  auto period = Number(std::string_view(cpu_max).substr(space + 1));
  if (!quota || !period || *period <= 0) return std::nullopt;
  return static_cast<double>(*quota) / static_cast<double>(*period);
}

Enforcement Cpus(const JobRecord& job) {
  const Readback& b = job.readback;
  Enforcement e{.resource = "cpus"};
  e.asked = Plural(job.request.cpus, "CPU");
  e.verdict = kHeld;
  if (!b.cpuset.empty()) {
    auto cpus = ParseCpuList(b.cpuset);
    e.applied = "cpuset " + b.cpuset;
    if (!cpus.ok() || static_cast<int64_t>(cpus->size()) != job.request.cpus ||
        (!job.cpuset.empty() && *cpus != job.cpuset))
      e.verdict = kDisagrees;
  } else if (!b.cpu_max.empty()) {
    std::optional<double> cpus = CpuMaxCpus(b.cpu_max);
    e.applied = "cpu.max " + b.cpu_max;
    if (!cpus || *cpus != static_cast<double>(job.request.cpus)) e.verdict = kDisagrees;
  } else {
    e.applied = b.host_unread.empty() ? "not read" : "not read: " + b.host_unread;
    e.verdict = kNotRead;
  }
  if (b.cpu_usec >= 0) {
    double seconds = static_cast<double>(b.cpu_usec) / 1e6;
    char text[64];
    std::snprintf(text, sizeof text, "%.1f s of CPU time", seconds);
    e.observed = text;
  } else {
    e.observed = job.end_ms == 0 ? "read when it ends" : "not read";
  }
  return e;
}

Enforcement Mem(const JobRecord& job) {
  const Readback& b = job.readback;
  uint64_t asked = job.request.mem_bytes;
  Enforcement e{.resource = "mem"};
  e.asked = asked > 0 ? FormatSize(asked) : "no limit";
  if (b.memory_max.empty()) {
    e.applied = b.host_unread.empty() ? "not read" : "not read: " + b.host_unread;
    e.verdict = kNotRead;
  } else {
    e.applied = "memory.max " + b.memory_max;
    std::optional<int64_t> max = Number(b.memory_max);
    bool agrees = asked == 0 ? b.memory_max == "max" : max && static_cast<uint64_t>(*max) == asked;
    e.verdict = agrees ? kHeld : kDisagrees;
  }
  if (b.mem_peak_bytes >= 0) {
    e.observed = "peak " + FormatSize(static_cast<uint64_t>(b.mem_peak_bytes));
    if (asked > 0 && static_cast<uint64_t>(b.mem_peak_bytes) >= asked)
      e.observed += ", at its limit";
  } else {
    e.observed = job.end_ms == 0 ? "read when it ends" : "not read";
  }
  return e;
}

Enforcement Time(const JobRecord& job) {
  int64_t limit = job.request.time_limit_s;
  Enforcement e{.resource = "time"};
  e.asked = limit > 0 ? FormatTimeLimit(limit) : "no limit";
  // pinpointd itself ends a job at its limit (JobRunner's timer from the job's start).
  e.applied =
      limit > 0 ? "pinpointd's timer: " + FormatTimeLimit(limit) + " from its start" : "no limit";
  if (job.end_ms > 0) {
    int64_t ran_s = std::max<int64_t>(job.end_ms - job.start_ms, 0) / 1000;
    e.observed = "ran " + FormatTimeLimit(ran_s);
  } else {
    e.observed = "running";
  }
  e.verdict =
      job.reason == Reason::kTimeLimit || job.stop_reason == Reason::kTimeLimit ? kExceeded : kHeld;
  return e;
}

}  // namespace

std::vector<Enforcement> EnforcementOf(const JobRecord& job) {
  if (job.kind != JobKind::kJob || job.start_ms == 0) return {};
  std::vector<Enforcement> list;
  if (job.request.gpus > 0) {
    list.push_back(Devices(job));
    list.push_back(GpuMem(job));
    if (job.request.gpu_share_pct > 0 || HasMps(job)) list.push_back(GpuShare(job));
  }
  list.push_back(Cpus(job));
  list.push_back(Mem(job));
  list.push_back(Time(job));
  return list;
}

size_t Disagreements(const std::vector<Enforcement>& list) {
  return static_cast<size_t>(std::count_if(
      list.begin(), list.end(), [](const Enforcement& e) { return e.verdict == kDisagrees; }));
}

std::string Bounded(std::string text) {
  if (text.size() > kMaxReadbackBytes) text.resize(kMaxReadbackBytes);
  return text;
}

}  // namespace pinpoint::daemon
