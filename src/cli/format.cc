#include "cli/format.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>

#include "common/cpu_list.h"
#include "common/utc_time.h"
#include "pinpoint/array_spec.h"
#include "pinpoint/escape.h"
#include "pinpoint/time_limit.h"
#include "pinpoint/units.h"

namespace pinpoint::cli {

namespace {

std::string Pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

// Renders rows as left-aligned columns separated by two spaces.
std::string Table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += i + 1 < row.size() ? Pad(row[i], widths[i] + 2) : row[i];
    }
    out += line + "\n";
  }
  return out;
}

std::string Devices(const JobView& job) {
  std::string out;
  for (const auto& a : job.allocations)
    out += (out.empty() ? "" : ",") + std::to_string(a.device_index);
  return out.empty() ? "-" : out;
}

}  // namespace

std::string ShownCommand(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    std::string arg = EscapeForTerminal(a);
    if (arg.empty() || arg.find_first_of(" '\"") != std::string::npos) {
      std::string quoted = "'";
      for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
      arg = quoted + "'";
    }
    out += (out.empty() ? "" : " ") + arg;
  }
  return out;
}

int64_t ElapsedMs(int64_t from, int64_t to) {
  int64_t ms = 0;
  if (__builtin_sub_overflow(to, from, &ms))
    return to > from ? std::numeric_limits<int64_t>::max() : 0;
  return ms;
}

std::string FormatDurationMs(int64_t ms) {
  if (ms < 0) ms = 0;
  char buf[32];
  if (ms < 60'000) {
    std::snprintf(buf, sizeof(buf), "%.1fs", static_cast<double>(ms) / 1000.0);
  } else if (ms < 3'600'000) {
    std::snprintf(buf, sizeof(buf), "%lldm%02llds", static_cast<long long>(ms / 60'000),
                  static_cast<long long>((ms / 1000) % 60));
  } else {
    std::snprintf(buf, sizeof(buf), "%lldh%02lldm", static_cast<long long>(ms / 3'600'000),
                  static_cast<long long>((ms / 60'000) % 60));
  }
  return buf;
}

std::string QueueStateName(const JobView& job) {
  if (job.state == JobState::kRunning && job.suspend == "suspended") return "suspended";
  return JobStateName(job.state);
}

std::string FormatGpuRequest(const JobRequest& request) {
  if (request.gpus == 0) return "-";
  std::string out =
      std::to_string(request.gpus) +
      (request.gpu_mem_bytes == 0 ? " GPU (whole)" : " GPU x " + FormatSize(request.gpu_mem_bytes));
  if (request.gpu_share_pct > 0) out += " " + std::to_string(request.gpu_share_pct) + "%";
  if (!request.mig_profile.empty()) out += " on MIG " + EscapeForTerminal(request.mig_profile);
  return out;
}

namespace {

// "2026-11-25 14:03 UTC" for a Unix time in ms ("" where the C library cannot say).
std::string UtcMinute(int64_t ms) {
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  char at[32] = "";
  if (::gmtime_r(&secs, &tm) != nullptr) std::strftime(at, sizeof(at), "%Y-%m-%d %H:%M UTC", &tm);
  return at;
}

// show's limit line: how long it may run (a lease: hold its slice), and while it runs, until when
// (later by the time it spent suspended; none while it is in a suspend: its time stands still).
std::string LimitLine(const JobView& job) {
  int64_t limit_s = job.request.time_limit_s;
  bool lease = job.kind == JobKind::kLease;
  if (limit_s <= 0) return lease ? "  limit:    none: it holds its slice until it is closed\n" : "";
  std::string out = "  limit:    " + std::string(lease ? "holds its slice" : "runs") + " at most " +
                    FormatTimeLimit(limit_s);
  int64_t until_ms = 0;
  if (job.state == JobState::kRunning && !job.suspend.empty())
    out += ", its time standing still while it is " + EscapeForTerminal(job.suspend);
  else if (job.state == JobState::kRunning && job.start_ms > 0 &&
           !__builtin_mul_overflow(limit_s, int64_t{1000}, &until_ms) &&
           !__builtin_add_overflow(until_ms, job.start_ms, &until_ms) &&
           !__builtin_add_overflow(until_ms, std::max<int64_t>(job.suspended_ms, 0), &until_ms))
    out += ", until " + UtcMinute(until_ms) +
           (job.suspended_ms > 0 ? " (" + FormatDurationMs(job.suspended_ms) + " suspended)" : "");
  return out + "\n";
}

// show's lines for submit --time, --after and --afterok, each only when given.
std::string SchedLines(const JobView& job) {
  const JobRequest& req = job.request;
  auto ids = [](const std::vector<JobId>& list) {
    std::string text;
    for (JobId id : list) text += (text.empty() ? "" : ", ") + std::to_string(id);
    return text;
  };
  std::string out = LimitLine(job);
  if (!req.after.empty())
    out += "  after:    " + ids(req.after) + " (starts once they have ended)\n";
  if (!req.afterok.empty())
    out += "  afterok:  " + ids(req.afterok) + " (starts once they have completed)\n";
  if (req.signal != 0)
    out += "  signal:   " + std::to_string(req.signal) + " to " +
           (req.signal_leader_only ? "its first process" : "its processes") + ", " +
           std::to_string(req.signal_before_s) + " s before the limit\n";
  if (req.requeue)
    out += "  requeue:  back to the queue if lost with its node or ended by an MPS fault\n";
  return out;
}

}  // namespace

std::string FormatEnforcement(const std::vector<Enforcement>& list) {
  if (list.empty()) return "";
  std::string out = "  enforcement (asked / applied, read back / observed):\n";
  for (const Enforcement& e : list) {
    out += "    " + Pad(EscapeForTerminal(e.resource), 13) + Pad(EscapeForTerminal(e.verdict), 15) +
           EscapeForTerminal(e.asked) + " / " + EscapeForTerminal(e.applied) + " / " +
           EscapeForTerminal(e.observed) + "\n";
  }
  return out;
}

std::string ArrayTaskName(const ArrayTask& array) {
  if (!array.pending.empty())
    return std::to_string(array.array_id) + "_[" + array.pending + "]";  // a rest
  return std::to_string(array.array_id) + "_" + std::to_string(array.index);
}

namespace {

// How many rows from `at` on are pending tasks of one array waiting for the same reason (1 for
// any other job).
size_t PendingTasksAlike(const std::vector<JobView>& jobs, size_t at) {
  const JobView& first = jobs[at];
  if (first.state != JobState::kPending || first.array.array_id == 0) return 1;
  size_t end = at + 1;
  while (end < jobs.size() && jobs[end].state == JobState::kPending &&
         jobs[end].array.array_id == first.array.array_id && jobs[end].reason == first.reason)
    ++end;
  return end - at;
}

}  // namespace

std::string FormatQueue(const QueueReply& reply, int64_t now_ms) {
  std::vector<std::vector<std::string>> rows = {
      {"ID", "USER", "NAME", "STATE", "GPU", "DEVICES", "TIME", "REASON"}};
  // The ARRAY column only when the page has a task of a job array: other queues stay as they were.
  bool arrays = std::any_of(reply.jobs.begin(), reply.jobs.end(),
                            [](const JobView& job) { return job.array.array_id != 0; });
  if (arrays) rows[0].insert(rows[0].begin() + 1, "ARRAY");
  for (size_t at = 0; at < reply.jobs.size(); ++at) {
    const JobView& job = reply.jobs[at];
    bool pending = job.state == JobState::kPending;
    // An array's pending tasks that wait for the same reason are one row, as squeue shows them:
    // "4_[5-20%4]" (running tasks keep a row each).
    size_t run = PendingTasksAlike(reply.jobs, at);
    int64_t elapsed = pending ? ElapsedMs(job.submit_ms, now_ms)
                              : ElapsedMs(job.start_ms, job.end_ms > 0 ? job.end_ms : now_ms);
    std::string why = EscapeForTerminal(job.reason);
    bool same_detail = std::all_of(reply.jobs.begin() + static_cast<std::ptrdiff_t>(at),
                                   reply.jobs.begin() + static_cast<std::ptrdiff_t>(at + run),
                                   [&](const JobView& task) { return task.detail == job.detail; });
    if (!job.detail.empty() && pending && same_detail) why += ": " + EscapeForTerminal(job.detail);
    std::string name = EscapeForTerminal(job.request.name);
    if (job.kind == JobKind::kLease) name = name.empty() ? "(lease)" : name + " (lease)";
    rows.push_back({std::to_string(job.id), EscapeForTerminal(job.user), name.empty() ? "-" : name,
                    QueueStateName(job), FormatGpuRequest(job.request), Devices(job),
                    FormatDurationMs(job.start_ms == 0 && !pending ? 0 : elapsed),
                    why.empty() ? "-" : why});
    std::string array = job.array.array_id != 0 ? ArrayTaskName(job.array) : "-";
    if (run > 1 || !job.array.pending.empty()) {
      // An array's rest (the row of its tasks not started yet) stands for every index it lists.
      ArraySpec tasks{{}, job.array.limit};
      for (size_t i = at; i < at + run; ++i) {
        const ArrayTask& task = reply.jobs[i].array;
        auto rest = task.pending.empty() ? Result<ArraySpec>(ArraySpec{{task.index}, 0})
                                         : ParseArraySpec(task.pending);
        if (rest.ok())
          tasks.indices.insert(tasks.indices.end(), rest->indices.begin(), rest->indices.end());
      }
      std::sort(tasks.indices.begin(), tasks.indices.end());
      tasks.indices.erase(std::unique(tasks.indices.begin(), tasks.indices.end()),
                          tasks.indices.end());
      array = std::to_string(job.array.array_id) + "_[" + FormatArraySpec(tasks) + "]";
      at += run - 1;
    }
    if (arrays) rows.back().insert(rows.back().begin() + 1, array);
  }
  std::string out = Table(rows);
  if (reply.jobs.empty()) out += "(no jobs)\n";
  if (reply.backend.rfind("simulated", 0) == 0)
    out += "node: SIMULATED (" + EscapeForTerminal(reply.backend) + "): no real GPU is used\n";
  return out;
}

std::string FormatStarts(const QueueReply& reply, int64_t now_ms) {
  std::map<JobId, const StartView*> starts;
  for (const StartView& s : reply.starts) starts[s.id] = &s;
  std::vector<std::vector<std::string>> rows = {{"ID", "USER", "NAME", "START"}};
  for (const JobView& job : reply.jobs) {
    auto it = starts.find(job.id);
    if (it == starts.end()) continue;
    const StartView& s = *it->second;
    std::string when;
    if (!s.start_ms) {
      when = "unknown: " + s.why;
    } else if (*s.start_ms <= now_ms) {
      when = "now";
    } else {
      when = "in " + FormatDurationMs(*s.start_ms - now_ms) + " (" + UtcMinute(*s.start_ms) + ")";
    }
    std::string name = EscapeForTerminal(job.request.name);
    rows.push_back({job.array.array_id != 0 ? ArrayTaskName(job.array) : std::to_string(job.id),
                    EscapeForTerminal(job.user), name.empty() ? "-" : name,
                    EscapeForTerminal(when)});
  }
  std::string out = Table(rows);
  if (rows.size() == 1) out += "(no pending jobs)\n";
  return out;
}

std::string MoreJobsLine(const QueueReply& reply, bool all, const std::string& user,
                         const std::string& more_options) {
  if (reply.more <= 0) return "";
  int64_t next = reply.offset + static_cast<int64_t>(reply.jobs.size());
  std::string command = "pinpoint queue" + std::string(all ? " --all" : "") +
                        (user.empty() ? "" : " --user " + EscapeForTerminal(user)) + more_options +
                        " --offset " + std::to_string(next);
  // In jobs, an array's pending tasks each counted: the rows the next pages show can be fewer.
  int64_t jobs = std::max(reply.more, reply.more_tasks);
  std::string rows = jobs == reply.more ? ""
                                        : " in " + std::to_string(reply.more) + " row" +
                                              (reply.more == 1 ? "" : "s");
  return "... " + std::to_string(jobs) + " more job" + (jobs == 1 ? "" : "s") + rows + ": " +
         command + " (--limit N for up to 10000 a page)\n";
}

namespace {

// "  array:    ..." for a task of an array; "" for any other job.
std::string ArrayLine(const ArrayTask& a) {
  if (a.array_id == 0) return "";
  std::ostringstream out;
  out << "  array:    " << ArrayTaskName(a) << " (task " << a.index << " of array " << a.array_id
      << ": " << a.count << " task" << (a.count == 1 ? "" : "s") << ", indices " << a.min_index
      << " to " << a.max_index
      << (a.limit > 0 ? ", at most " + std::to_string(a.limit) + " running at once" : "") << ")\n";
  return out.str();
}

// What the job runs and what it asked for: a lease's container, or a job's command.
std::string RequestLines(const JobView& job) {
  const JobRequest& req = job.request;
  std::ostringstream out;
  if (job.kind == JobKind::kLease) {
    out << "  command:  none: a lease for a container (docs/containers.md)\n";
    out << "  cgroup:   "
        << (job.lease_cgroup.empty() ? "not attached yet" : EscapeForTerminal(job.lease_cgroup))
        << "\n";
    out << "  request:  " << FormatGpuRequest(req) << ", priority " << req.priority << "\n";
    out << LimitLine(job);
    return out.str();
  }
  out << "  command:  " << ShownCommand(req.argv) << "\n";
  out << "  cwd:      " << EscapeForTerminal(req.cwd) << "\n";
  if (!req.output_path.empty()) out << "  output:   " << EscapeForTerminal(req.output_path) << "\n";
  if (!req.error_path.empty()) out << "  errors:   " << EscapeForTerminal(req.error_path) << "\n";
  out << "  request:  " << FormatGpuRequest(req) << ", " << req.cpus << " CPU"
      << (req.mem_bytes ? ", " + FormatSize(req.mem_bytes) + " host memory" : "") << ", priority "
      << req.priority << (req.qos.empty() ? "" : ", qos " + req.qos) << "\n";
  if (!job.suspend.empty())
    out << "  suspend:  " << EscapeForTerminal(job.suspend) << " ("
        << EscapeForTerminal(job.suspend_detail) << ")\n";
  out << SchedLines(job);
  return out.str();
}

// Where it ran and how it ended: its devices, CPUs, runtime, exit code or signal.
std::string RunLines(const JobView& job) {
  std::ostringstream out;
  for (const auto& a : job.allocations) {
    out << "  device:   " << a.device_index << " " << EscapeForTerminal(a.uuid) << " "
        << (a.gpu_mem_bytes ? FormatSize(a.gpu_mem_bytes) : "whole") << " "
        << SharingModeName(a.mode)
        << (a.gpu_share_pct ? " " + std::to_string(a.gpu_share_pct) + "%" : "") << "\n";
  }
  if (!job.cpuset.empty()) out << "  cpus:     " << FormatCpuList(job.cpuset) << " (its own)\n";
  if (job.start_ms > 0 && job.end_ms > 0)
    out << "  runtime:  " << FormatDurationMs(job.end_ms - job.start_ms) << "\n";
  if (job.exit_code) out << "  exit:     " << *job.exit_code << "\n";
  if (job.term_signal) out << "  signal:   " << *job.term_signal << "\n";
  return out.str();
}

// What the watcher measured: device memory, energy, how busy its GPUs were; "" before a sample.
std::string UsageLines(const JobView& job) {
  const JobUsage& u = job.usage;
  if (u.samples == 0) return "";
  std::ostringstream out;
  bool running = job.state == JobState::kRunning;
  out << "  gpu mem:  peak " << FormatSize(u.gpu_mem_peak_bytes);
  if (running) out << ", now " << FormatSize(u.gpu_mem_now_bytes);
  if (job.request.gpu_mem_bytes)
    out << " (asked " << FormatSize(job.request.gpu_mem_bytes) << " per device)";
  out << "\n";
  char energy[64];
  std::snprintf(energy, sizeof(energy), "%.1f kJ", static_cast<double>(u.energy_mj) / 1e6);
  out << "  energy:   " << energy
      << (u.final || running ? "" : " (last interval not yet accounted)") << "\n";
  if (u.util_pct_mean >= 0)
    out << "  gpu busy: " << u.util_pct_mean << "% of the time (whole GPUs)\n";
  return out.str();
}

// The job's events, each at its time from the first; "" with none.
std::string HistoryLines(const std::vector<JobEventView>& events) {
  if (events.empty()) return "";
  std::ostringstream out;
  out << "  history:\n";
  int64_t first = events[0].time_ms;
  for (const auto& e : events) {
    out << "    +" << Pad(FormatDurationMs(ElapsedMs(first, e.time_ms)), 8)
        << EscapeForTerminal(e.kind) << (e.detail.empty() ? "" : ": " + EscapeForTerminal(e.detail))
        << "\n";
  }
  return out.str();
}

}  // namespace

std::string FormatJob(const ShowReply& reply, const std::string& advice) {
  const JobView& job = reply.job;
  std::string name = EscapeForTerminal(job.request.name);
  std::ostringstream out;
  out << (job.kind == JobKind::kLease ? "lease " : "job ") << job.id
      << (name.empty() ? "" : " (" + name + ")") << "\n";
  out << "  state:    " << JobStateName(job.state);
  if (!job.reason.empty()) out << " (" << EscapeForTerminal(job.reason) << ")";
  out << "\n";
  if (!job.detail.empty()) out << "  detail:   " << EscapeForTerminal(job.detail) << "\n";
  out << "  user:     " << EscapeForTerminal(job.user) << " (uid " << job.uid << ")\n";
  out << ArrayLine(job.array) << RequestLines(job) << RunLines(job) << UsageLines(job);
  if (!advice.empty()) out << "  advice:   " << EscapeForTerminal(advice) << "\n";
  out << FormatEnforcement(job.enforcement) << HistoryLines(reply.events);
  return out.str();
}

namespace {

// Who holds a device after its job ended, one line each; "" when no one does.
std::string FormatHolds(const GpusReply& reply) {
  std::string out;
  for (const DeviceView& d : reply.devices) {
    for (const DeviceHoldView& h : d.holds) {
      std::string pids;
      for (int64_t pid : h.pids) pids += (pids.empty() ? "" : ",") + std::to_string(pid);
      out += "  device " + std::to_string(d.index) + ": process " + pids + " of " +
             EscapeForTerminal(h.user) +
             (h.in_job ? " (job " + std::to_string(h.job) + "'s own: killed)"
                       : ", in no job, since job " + std::to_string(h.job) + " ended at " +
                             UtcTimeText(h.since_ms));
      if (!h.unkillable.empty()) {
        std::string held;
        for (int64_t pid : h.unkillable) held += (held.empty() ? "" : ",") + std::to_string(pid);
        out += ": process " + held + " could not be killed; the device is drained until it exits";
      } else if (!h.in_job) {
        out += h.killed            ? ": sent SIGKILL at the deadline"
               : h.deadline_ms < 0 ? ""
                                   : "; killed at " + UtcTimeText(h.deadline_ms);
      }
      out += "\n";
    }
  }
  return out.empty() ? ""
                     : "held after their job ended (taken until these processes exit):\n" + out;
}

}  // namespace

std::string FormatGpus(const GpusReply& reply) {
  std::string out;
  std::string backend = EscapeForTerminal(reply.backend);
  out += reply.simulated
             ? "node: SIMULATED (" + backend + "): no real GPU is used\n"
             : "node: " + backend + ", driver " + EscapeForTerminal(reply.driver) + "\n";
  std::vector<std::vector<std::string>> rows = {{"DEV", "GPU", "UUID", "NAME", "MODE", "MEMORY",
                                                 "ALLOCATED", "FREE", "SHARE FREE", "MPS USER",
                                                 "JOBS"}};
  for (const auto& d : reply.devices) {
    std::string jobs;
    for (const auto& j : d.jobs) jobs += (jobs.empty() ? "" : ",") + std::to_string(j.id);
    bool vacant = d.mig_slot && d.mig_slot->vacant;
    rows.push_back({std::to_string(d.index), std::to_string(d.gpu_index),
                    vacant ? "-" : EscapeForTerminal(d.uuid), EscapeForTerminal(d.name),
                    std::string(SharingModeName(d.mode)) + (d.drained ? " (drained)" : ""),
                    FormatSize(d.mem_bytes), FormatSize(d.mem_allocated_bytes),
                    FormatSize(d.mem_free_bytes), std::to_string(d.share_free_pct) + "%",
                    d.mps_user ? EscapeForTerminal(*d.mps_user) : "-",
                    jobs.empty() ? "-" : std::to_string(d.jobs.size()) + " (" + jobs + ")"});
  }
  out += Table(rows);
  const HostView& host = reply.host;
  out += "host: " + std::to_string(host.cpus_allocated) + "/" + std::to_string(host.cpus) +
         " CPUs, " + FormatSize(host.mem_allocated_bytes) + "/" + FormatSize(host.mem_bytes) +
         " memory allocated\n";
  out += FormatHolds(reply);
  if (!reply.mig_changes.empty()) {
    out += "MIG changes (mig-dynamic), oldest first:\n";
    for (const MigChangeView& c : reply.mig_changes) {
      out += "  " + UtcTimeText(c.at_ms) + "  GPU " + std::to_string(c.gpu) + " " +
             EscapeForTerminal(c.action) + " " + EscapeForTerminal(c.profile) +
             " at memory slice " + std::to_string(c.start);
      if (c.instance_id != 0) out += " (GPU instance " + std::to_string(c.instance_id) + ")";
      if (c.for_job != 0) out += " for job " + std::to_string(c.for_job);
      out += c.result == "ok" ? "\n" : ": FAILED: " + EscapeForTerminal(c.result) + "\n";
    }
  }
  return out;
}

namespace {
std::string EndWhy(const JobView& job) {
  return EscapeForTerminal(job.detail.empty() ? job.reason : job.detail);
}
}  // namespace

namespace {

// How a job ended, with one level of brackets at most: a detail that begins with the state's
// word ("cancelled by alice (killed by signal 15 (Terminated))") is said once, a signal's name
// follows its number after a colon, and a detail with brackets of its own follows a colon.
std::string EndPhrase(const JobView& job) {
  std::string why = EndWhy(job);
  for (size_t at = why.find("signal "); at != std::string::npos; at = why.find("signal ", at + 1)) {
    size_t open = why.find_first_not_of("0123456789", at + 7);
    size_t close = open == std::string::npos ? open : why.find(')', open);
    if (open == at + 7 || close == std::string::npos || why.compare(open, 2, " (") != 0) continue;
    why =
        why.substr(0, open) + ": " + why.substr(open + 2, close - open - 2) + why.substr(close + 1);
  }
  std::string state = JobStateName(job.state);
  if (why.rfind(state + " ", 0) == 0) return why;
  if (why.find('(') != std::string::npos) return state + ": " + why;  // brackets of its own
  return state + " (" + why + ")";
}

}  // namespace

std::string FormatJobEnd(const JobView& job) {
  return "job " + std::to_string(job.id) + " " + EndPhrase(job) + "\n";
}

std::string FormatArrayEnd(JobId array_id, const std::vector<JobView>& tasks) {
  std::map<JobState, int> by_state;
  std::vector<const JobView*> unsuccessful;
  for (const JobView& task : tasks) {
    ++by_state[task.state];
    if (task.state != JobState::kCompleted) unsuccessful.push_back(&task);
  }
  std::string out = "array " + std::to_string(array_id) + ": " + std::to_string(tasks.size()) +
                    " task" + (tasks.size() == 1 ? "" : "s");
  for (const auto& [state, n] : by_state)
    out += ", " + std::to_string(n) + " " + JobStateName(state);
  out += "\n";
  constexpr size_t kShown = 10;  // an array of thousands must not flood the terminal
  for (size_t i = 0; i < unsuccessful.size() && i < kShown; ++i) {
    const JobView& task = *unsuccessful[i];
    out += "  job " + std::to_string(task.id) + " (" + ArrayTaskName(task.array) + ") " +
           EndPhrase(task) + "\n";
  }
  if (unsuccessful.size() > kShown)
    out += "  ... and " + std::to_string(unsuccessful.size() - kShown) +
           " more that did not complete\n";
  return out;
}

int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case Code::kOk:
      return 0;
    case Code::kInvalidArgument:
      return 2;
    case Code::kUnavailable:
      return 3;
    case Code::kNotFound:
      return 4;
    case Code::kPermissionDenied:
      return 5;
    case Code::kFailedPrecondition:
      return 6;
    default:
      return 1;
  }
}

std::string FormatQos(const QosReply& reply) {
  auto joined = [](const std::vector<std::string>& names, const char* none) {
    std::string text;
    for (const std::string& n : names) text += (text.empty() ? "" : ",") + EscapeForTerminal(n);
    return text.empty() ? std::string(none) : text;
  };
  std::ostringstream out;
  out << std::left << std::setw(16) << "NAME" << std::setw(10) << "PRIORITY" << std::setw(18)
      << "PREEMPTS" << std::setw(10) << "PREEMPTED" << std::setw(8) << "GRACE" << std::setw(8)
      << "MPS_PRI"
      << "USERS\n";
  for (const ServiceClass& c : reply.classes) {
    std::string name = EscapeForTerminal(c.name) + (c.name == reply.default_qos ? "*" : "");
    out << std::setw(16) << name << std::setw(10) << c.priority << std::setw(18)
        << joined(c.preempts, "-") << std::setw(10) << PreemptModeName(c.preempt_mode)
        << std::setw(8) << (std::to_string(c.grace_s) + "s") << std::setw(8)
        << c.mps_client_priority << joined(c.users, "everyone") << "\n";
  }
  out << "* the default class: a job submitted without --qos runs in it\n";
  return out.str();
}

}  // namespace pinpoint::cli
