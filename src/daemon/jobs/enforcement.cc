#include "daemon/jobs/enforcement.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <optional>
#include <tuple>
#include <utility>

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
constexpr char kOverridden[] = "overridden";

std::optional<int64_t> Number(std::string_view text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string Plural(int64_t n, const char* one) {
  return std::to_string(n) + " " + one + (n == 1 ? "" : "s");
}

std::string NotReadEnv(const JobRecord& job) {
  return job.end_ms == 0 ? "not read yet: no process of it seen"
                         : "not read: no process of it was seen carrying its environment";
}

constexpr char kNotRecorded[] =
    "not recorded: the job started before pinpoint kept what its hold applies";

// The limit its hold applies to `resource` (AppliedLimit), or null where none was recorded.
const AppliedLimit* LimitOf(const JobRecord& job, const char* resource) {
  for (const AppliedLimit& l : job.readback.limits)
    if (l.resource == resource) return &l;
  return nullptr;
}

std::string Setting(const AppliedLimit& l, const std::string& value) {
  return value.empty() ? l.variable + " not set" : l.variable + "=" + value;
}

// What was applied through a variable, judged from what the job's processes ran with: "held"
// when each one read ran with what the hold gives, "overridden" when one of them ran with
// something else (the job's own doing: an exec with another environment, a process that set
// its own limit), "disagrees" when pinpoint gave its environment something else at its start
// (pinpoint's own failure: the only one of the three the node counts as a disagreement), and
// "not seen" before any process was read. The values its GPU processes ran with decide where
// one was read; else the first process's.
std::pair<std::string, std::string> JudgeVariable(const JobRecord& job, const AppliedLimit& l) {
  const Readback& b = job.readback;
  if (l.given != l.expected)
    return {Setting(l, l.given) + " given, " + Setting(l, l.expected) + " expected", kDisagrees};
  if (!b.env_read) return {NotReadEnv(job), kNotSeen};
  std::vector<std::string> ran;
  auto gpu = b.gpu_env.find(l.variable);
  if (b.gpu_env_reads > 0 && gpu != b.gpu_env.end()) {
    ran = gpu->second;
  } else {
    auto first = b.env.find(l.variable);
    ran = {first == b.env.end() ? "" : first->second};
  }
  std::string others;
  for (const std::string& value : ran)
    if (value != l.expected) others += (others.empty() ? "" : ", ") + Setting(l, value);
  if (others.empty()) return {Setting(l, l.expected), kHeld};
  return {Setting(l, l.expected) + " given; a process of the job ran with " + others, kOverridden};
}

Enforcement Devices(const JobRecord& job) {
  const JobRequest& r = job.request;
  const Readback& b = job.readback;
  Enforcement e{.resource = "devices"};
  e.asked = r.gpus == 1 && r.gpu_mem_bytes > 0 ? "a slice of 1 GPU" : Plural(r.gpus, "GPU");
  if (const AppliedLimit* l = LimitOf(job, "devices")) {
    std::tie(e.applied, e.verdict) = JudgeVariable(job, *l);
  } else {
    e.applied = kNotRecorded;
    e.verdict = kNotRead;
  }
  std::string seen;
  for (int gpu : b.gpus_seen) seen += (seen.empty() ? "GPU " : ", ") + std::to_string(gpu);
  e.observed = seen.empty() ? "none seen" : seen + " (NVML)";
  return e;
}

Enforcement GpuMem(const JobRecord& job) {
  const JobRequest& r = job.request;
  Enforcement e{.resource = "gpu_mem"};
  e.asked = r.gpu_mem_bytes > 0 ? FormatSize(r.gpu_mem_bytes) : "whole device";
  const JobUsage& u = job.usage;
  if (u.samples == 0)
    e.observed = "none seen";
  else if (u.gpu_mem_peak_bytes == 0)
    e.observed = "nothing of it on its GPUs (NVML)";
  else
    e.observed = "peak " + FormatSize(u.gpu_mem_peak_bytes) + " (NVML)";
  const AppliedLimit* l = LimitOf(job, "gpu_mem");
  if (l == nullptr) {
    e.applied = kNotRecorded;
    e.verdict = kNotRead;
    return e;
  }
  if (!l->variable.empty()) {
    std::tie(e.applied, e.verdict) = JudgeVariable(job, *l);
    if (e.verdict == kOverridden) e.applied += ": pinpointd's watcher is its bound";
  } else {
    e.applied = l->what + (l->strength == LimitStrength::kHardware ? ", " + l->expected : "");
    // The device's own memory holds whatever the job does; the watcher's budget what it saw.
    e.verdict = l->strength == LimitStrength::kHardware || u.samples > 0 ? kHeld : kNotSeen;
  }
  // Past its budget (the driver's limit and the watcher's): a device held whole has none.
  bool budgeted = l->strength != LimitStrength::kHardware;
  if (job.stop_reason == Reason::kGpuMemExceeded ||
      (budgeted && r.gpu_mem_bytes > 0 && u.samples > 0 && u.gpu_mem_peak_bytes > r.gpu_mem_bytes))
    e.verdict = kExceeded;
  return e;
}

Enforcement GpuShare(const JobRecord& job, const AppliedLimit* l) {
  const JobRequest& r = job.request;
  Enforcement e{.resource = "gpu_share"};
  e.asked = r.gpu_share_pct > 0 ? std::to_string(r.gpu_share_pct) + "% of SMs" : "none";
  e.observed = job.usage.util_pct_mean >= 0
                   ? "GPU utilisation " + std::to_string(job.usage.util_pct_mean) + "% mean"
                   : "not measured";
  if (l == nullptr) {
    e.applied = kNotRecorded;
    e.verdict = kNotRead;
    return e;
  }
  if (!l->unobservable.empty()) e.observed = l->unobservable;
  if (!l->variable.empty()) {
    std::tie(e.applied, e.verdict) = JudgeVariable(job, *l);
    if (l->expected.empty() && e.verdict == kHeld) e.applied = l->what;
  } else {
    e.applied = l->what;
    // Every SM of a device held whole is at least any share; no cap at all is less than one.
    e.verdict = l->strength == LimitStrength::kNone && r.gpu_share_pct > 0 ? kDisagrees : kHeld;
  }
  if (e.verdict == kHeld && !l->unobservable.empty()) e.verdict = kNotMeasurable;
  return e;
}

// A priority the hold gives the job's GPU clients among their device's others (from the job's
// service class): judged, as any variable, from what its processes ran with. How much GPU time
// a priority buys is not observed per client.
Enforcement GpuPriority(const JobRecord& job, const AppliedLimit& l) {
  Enforcement e{.resource = "gpu_priority"};
  e.asked = job.request.qos.empty() ? "the default class" : "class " + job.request.qos;
  std::tie(e.applied, e.verdict) = JudgeVariable(job, l);
  if (e.verdict == kHeld) e.applied = Setting(l, l.expected) + " (" + l.what + ")";
  e.observed = l.unobservable.empty() ? "the value its processes ran with" : l.unobservable;
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
  if (!b.cpuset.empty() && job.cpuset.empty() && !b.cpu_max.empty()) {
    // It shares CPUs (none of its own): its quota is the limit, the cpuset only where.
    std::optional<double> cpus = CpuMaxCpus(b.cpu_max);
    e.applied = "cpu.max " + b.cpu_max + " on cpuset " + b.cpuset;
    if (!cpus || *cpus != static_cast<double>(job.request.cpus)) e.verdict = kDisagrees;
  } else if (!b.cpuset.empty()) {
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
  // pinpointd itself ends a job at its limit (JobRunner's timer from the job's start, stopped
  // while it is suspended: lifecycle::TimeLimitDeadlineMs).
  e.applied = limit > 0 ? "pinpointd's timer: " + FormatTimeLimit(limit) +
                              " from its start, its time suspended not counted"
                        : "no limit";
  int64_t suspended_s = std::max<int64_t>(job.suspended_ms, 0) / 1000;
  if (job.end_ms > 0) {
    int64_t ran_s = std::max<int64_t>(job.end_ms - job.start_ms, 0) / 1000;
    e.observed = "ran " + FormatTimeLimit(std::max<int64_t>(ran_s - suspended_s, 0));
    if (suspended_s > 0) e.observed += ", and " + FormatTimeLimit(suspended_s) + " suspended";
  } else if (job.suspend.phase != SuspendPhase::kNone) {
    e.observed = SuspendPhaseName(job.suspend.phase);
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
    // Shown where a share was asked, or where the hold names a variable for it (an MPS client
    // runs with or without an SM cap).
    const AppliedLimit* share = LimitOf(job, "gpu_share");
    if (job.request.gpu_share_pct > 0 || (share != nullptr && !share->variable.empty()))
      list.push_back(GpuShare(job, share));
    // Shown where the hold gives a priority among a device's clients (an MPS client's).
    const AppliedLimit* priority = LimitOf(job, "gpu_priority");
    if (priority != nullptr && !priority->variable.empty())
      list.push_back(GpuPriority(job, *priority));
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

size_t Overrides(const std::vector<Enforcement>& list) {
  return static_cast<size_t>(std::count_if(
      list.begin(), list.end(), [](const Enforcement& e) { return e.verdict == kOverridden; }));
}

std::string Bounded(std::string text) {
  if (text.size() > kMaxReadbackBytes) text.resize(kMaxReadbackBytes);
  return text;
}

}  // namespace pinpoint::daemon
