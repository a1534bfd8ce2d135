#include "cli/format.h"

#include <cstdio>
#include <sstream>

#include "pinpoint/escape.h"
#include "pinpoint/units.h"

namespace pinpoint::cli {

using nlohmann::json;

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

std::string Str(const json& j, const char* key) { return ShownText(j, key); }
int64_t Int(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<int64_t>() : 0;
}
uint64_t U64(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number_unsigned() ? j[key].get<uint64_t>()
         : j.contains(key) && j[key].is_number_integer() ? static_cast<uint64_t>(std::max<int64_t>(0, j[key].get<int64_t>()))
                                                          : 0;
}

std::string Devices(const json& job) {
  std::string out;
  if (!job.contains("allocations")) return "-";
  for (const auto& a : job["allocations"]) out += (out.empty() ? "" : ",") + std::to_string(Int(a, "device_index"));
  return out.empty() ? "-" : out;
}

}  // namespace

std::string ShownText(const json& j, const char* key) {
  return j.is_object() && j.contains(key) ? ShownText(j[key]) : "";
}

std::string ShownText(const json& value) {
  if (value.is_string()) return EscapeForTerminal(value.get<std::string>());
  return value.is_null() ? "" : value.dump();
}

std::string ShownCommand(const json& argv) {
  std::string out;
  if (!argv.is_array()) return out;
  for (const auto& a : argv) {
    std::string arg = ShownText(a);
    if (arg.empty() || arg.find_first_of(" '\"") != std::string::npos) {
      std::string quoted = "'";
      for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
      arg = quoted + "'";
    }
    out += (out.empty() ? "" : " ") + arg;
  }
  return out;
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

std::string FormatGpuRequest(const json& request) {
  int64_t gpus = Int(request, "gpus");
  uint64_t mem = U64(request, "gpu_mem_bytes");
  int64_t share = Int(request, "gpu_share_pct");
  if (gpus == 0) return "-";
  std::string out = std::to_string(gpus) + (mem == 0 ? " GPU (whole)" : " GPU x " + FormatSize(mem));
  if (share > 0) out += " " + std::to_string(share) + "%";
  return out;
}

std::string FormatQueue(const json& reply, int64_t now_ms) {
  std::vector<std::vector<std::string>> rows = {
      {"ID", "USER", "NAME", "STATE", "GPU", "DEVICES", "TIME", "REASON"}};
  for (const auto& job : reply["jobs"]) {
    const json& req = job["request"];
    std::string state = Str(job, "state");
    int64_t start = Int(job, "start_ms"), end = Int(job, "end_ms"), submit = Int(job, "submit_ms");
    int64_t elapsed = state == "pending" ? now_ms - submit : (end > 0 ? end : now_ms) - start;
    std::string why = Str(job, "reason");
    if (!Str(job, "detail").empty() && state == "pending") why += ": " + Str(job, "detail");
    rows.push_back({std::to_string(Int(job, "id")), Str(job, "user"),
                    Str(req, "name").empty() ? "-" : Str(req, "name"), state,
                    FormatGpuRequest(req), Devices(job),
                    FormatDurationMs(start == 0 && state != "pending" ? 0 : elapsed),
                    why.empty() ? "-" : why});
  }
  std::string out = Table(rows);
  if (reply["jobs"].empty()) out += "(no jobs)\n";
  std::string backend = Str(reply, "backend");
  if (backend.rfind("simulated", 0) == 0) out += "node: SIMULATED (" + backend + "): no real GPU is used\n";
  return out;
}

std::string MoreJobsLine(const json& reply, bool all, const std::string& user) {
  int64_t more = Int(reply, "more");
  if (more <= 0) return "";
  int64_t next = Int(reply, "offset") + static_cast<int64_t>(reply.contains("jobs") ? reply["jobs"].size() : 0);
  std::string command = "pinpoint queue" + std::string(all ? " --all" : "") +
                        (user.empty() ? "" : " --user " + EscapeForTerminal(user)) +
                        " --offset " + std::to_string(next);
  return "... " + std::to_string(more) + " more job" + (more == 1 ? "" : "s") + ": " + command +
         " (--limit N for up to 10000 a page)\n";
}

std::string FormatJob(const json& reply) {
  const json& job = reply["job"];
  const json& req = job["request"];
  std::ostringstream out;
  out << "job " << Int(job, "id") << (Str(req, "name").empty() ? "" : " (" + Str(req, "name") + ")") << "\n";
  out << "  state:    " << Str(job, "state");
  if (!Str(job, "reason").empty()) out << " (" << Str(job, "reason") << ")";
  out << "\n";
  if (!Str(job, "detail").empty()) out << "  detail:   " << Str(job, "detail") << "\n";
  out << "  user:     " << Str(job, "user") << " (uid " << Int(job, "uid") << ")\n";
  out << "  command:  " << ShownCommand(req["argv"]) << "\n";
  out << "  cwd:      " << Str(req, "cwd") << "\n";
  out << "  request:  " << FormatGpuRequest(req) << ", " << Int(req, "cpus") << " CPU"
      << (U64(req, "mem_bytes") ? ", " + FormatSize(U64(req, "mem_bytes")) + " host memory" : "")
      << ", priority " << Int(req, "priority") << "\n";
  for (const auto& a : job["allocations"]) {
    out << "  device:   " << Int(a, "device_index") << " " << Str(a, "uuid") << " "
        << (U64(a, "gpu_mem_bytes") ? FormatSize(U64(a, "gpu_mem_bytes")) : "whole") << " "
        << Str(a, "mode") << (Int(a, "gpu_share_pct") ? " " + std::to_string(Int(a, "gpu_share_pct")) + "%" : "")
        << "\n";
  }
  int64_t start = Int(job, "start_ms"), end = Int(job, "end_ms");
  if (start > 0 && end > 0) out << "  runtime:  " << FormatDurationMs(end - start) << "\n";
  if (job.contains("exit_code") && !job["exit_code"].is_null()) out << "  exit:     " << job["exit_code"].get<int>() << "\n";
  if (job.contains("term_signal") && !job["term_signal"].is_null()) out << "  signal:   " << job["term_signal"].get<int>() << "\n";
  if (job.contains("usage") && Int(job["usage"], "samples") > 0) {
    const json& u = job["usage"];
    out << "  gpu mem:  peak " << FormatSize(U64(u, "gpu_mem_peak_bytes"));
    if (Str(job, "state") == "running") out << ", now " << FormatSize(U64(u, "gpu_mem_now_bytes"));
    if (U64(req, "gpu_mem_bytes")) out << " (asked " << FormatSize(U64(req, "gpu_mem_bytes")) << " per device)";
    out << "\n";
    char energy[64];
    std::snprintf(energy, sizeof(energy), "%.1f kJ", static_cast<double>(U64(u, "energy_mj")) / 1e6);
    out << "  energy:   " << energy << (u.value("final", false) || Str(job, "state") == "running" ? "" : " (last interval not yet accounted)") << "\n";
    if (Int(u, "util_pct_mean") >= 0) out << "  gpu busy: " << Int(u, "util_pct_mean") << "% of the time (whole GPUs)\n";
  }
  if (reply.contains("advice")) out << "  advice:   " << Str(reply["advice"], "text") << "\n";
  if (reply.contains("events") && !reply["events"].empty()) {
    out << "  history:\n";
    int64_t first = Int(reply["events"][0], "time_ms");
    for (const auto& e : reply["events"]) {
      out << "    +" << Pad(FormatDurationMs(Int(e, "time_ms") - first), 8) << Str(e, "kind")
          << (Str(e, "detail").empty() ? "" : ": " + Str(e, "detail")) << "\n";
    }
  }
  return out.str();
}

std::string FormatGpus(const json& reply) {
  std::string out;
  std::string backend = Str(reply, "backend");
  bool simulated = reply.value("simulated", false);
  out += simulated ? "node: SIMULATED (" + backend + "): no real GPU is used\n"
                   : "node: " + backend + ", driver " + Str(reply, "driver") + "\n";
  std::vector<std::vector<std::string>> rows = {
      {"DEV", "GPU", "UUID", "NAME", "MODE", "MEMORY", "ALLOCATED", "FREE", "SHARE FREE", "MPS USER", "JOBS"}};
  for (const auto& d : reply["devices"]) {
    std::string jobs;
    for (const auto& j : d["jobs"]) jobs += (jobs.empty() ? "" : ",") + std::to_string(Int(j, "id"));
    std::string mode = Str(d, "mode") + (d.value("drained", false) ? " (drained)" : "");
    rows.push_back({std::to_string(Int(d, "index")), std::to_string(Int(d, "gpu_index")), Str(d, "uuid"),
                    Str(d, "name"), mode, FormatSize(U64(d, "mem_bytes")),
                    FormatSize(U64(d, "mem_allocated_bytes")), FormatSize(U64(d, "mem_free_bytes")),
                    std::to_string(Int(d, "share_free_pct")) + "%",
                    d["mps_user"].is_string() ? Str(d, "mps_user") : "-",
                    jobs.empty() ? "-" : std::to_string(d["jobs"].size()) + " (" + jobs + ")"});
  }
  out += Table(rows);
  const json& host = reply["host"];
  out += "host: " + std::to_string(Int(host, "cpus_allocated")) + "/" + std::to_string(Int(host, "cpus")) +
         " CPUs, " + FormatSize(U64(host, "mem_allocated_bytes")) + "/" + FormatSize(U64(host, "mem_bytes")) +
         " memory allocated\n";
  return out;
}

int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case Code::kOk: return 0;
    case Code::kInvalidArgument: return 2;
    case Code::kUnavailable: return 3;
    case Code::kNotFound: return 4;
    case Code::kPermissionDenied: return 5;
    case Code::kFailedPrecondition: return 6;
    default: return 1;
  }
}

}  // namespace pinpoint::cli
