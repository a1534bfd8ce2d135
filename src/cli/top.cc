#include "cli/top.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "cli/format.h"
#include "pinpoint/units.h"

namespace pinpoint::cli {

using nlohmann::json;

namespace {

uint64_t U64(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number_unsigned() ? j[key].get<uint64_t>() : 0;
}
int64_t I64(const json& j, const char* key, int64_t otherwise = 0) {
  return j.contains(key) && j[key].is_number_integer() ? j[key].get<int64_t>() : otherwise;
}
std::string S(const json& j, const char* key) { return ShownText(j, key); }

}  // namespace

std::string Bar(double used, double total, int width) {
  int filled = total > 0 ? static_cast<int>(std::lround(std::clamp(used / total, 0.0, 1.0) * width)) : 0;
  return "[" + std::string(static_cast<size_t>(filled), '#') + std::string(static_cast<size_t>(width - filled), '.') + "]";
}

std::string FormatTop(const json& reply, int64_t now_ms) {
  std::string out;
  std::time_t t = static_cast<std::time_t>(now_ms / 1000);
  char when[32];
  std::strftime(when, sizeof(when), "%H:%M:%S", std::localtime(&t));
  bool simulated = reply.value("simulated", false);
  out += fmt::format("pinpoint top  {}  {}{}\n", when, S(reply, "backend"), simulated ? " (SIMULATED: no real GPU)" : "");
  const json& host = reply["host"];
  out += fmt::format("host: {}/{} CPUs, {}/{} memory allocated\n\n", I64(host, "cpus_allocated"), I64(host, "cpus"),
                     FormatSize(U64(host, "mem_allocated_bytes")), FormatSize(U64(host, "mem_bytes")));
  for (const auto& d : reply["devices"]) {
    std::string mps = d["mps_user"].is_string() ? " mps:" + S(d, "mps_user") : "";
    std::string state = d.value("drained", false) ? " DRAINED" : (d.value("recovering", false) ? " RECOVERING" : "");
    out += fmt::format("dev {} (GPU {}) {} [{}{}{}]\n", I64(d, "index"), I64(d, "gpu_index"), S(d, "name"), S(d, "mode"), mps, state);
    uint64_t total = U64(d, "mem_bytes");
    if (d.contains("mem_used_bytes")) {
      int util = static_cast<int>(I64(d, "utilization_pct", -1));
      out += fmt::format("  used  {} {:>9} / {:<9} util {:>4}  power {:>6.1f} W\n", Bar(double(U64(d, "mem_used_bytes")), double(total), 30),
                         FormatSize(U64(d, "mem_used_bytes")), FormatSize(total), util >= 0 ? std::to_string(util) + "%" : "-",
                         I64(d, "power_mw") / 1000.0);
    }
    out += fmt::format("  slices {} {:>9} allocated, {}% share free\n", Bar(double(U64(d, "mem_allocated_bytes")), double(total), 30),
                       FormatSize(U64(d, "mem_allocated_bytes")), I64(d, "share_free_pct"));
    if (d["jobs"].empty()) {
      out += "  (no jobs)\n";
      continue;
    }
    out += fmt::format("  {:>7} {:<10} {:<16} {:>9} {:>9} {:>14} {:>6} {:>10}\n", "JOB", "USER", "NAME", "USED", "SLICE", "", "SHARE", "ENERGY");
    for (const auto& j : d["jobs"]) {
      uint64_t slice = U64(j, "gpu_mem_bytes");
      bool seen = j.contains("gpu_mem_used_bytes");
      uint64_t used = U64(j, "gpu_mem_used_bytes");
      std::string name = S(j, "name").substr(0, 16);
      out += fmt::format("  {:>7} {:<10} {:<16} {:>9} {:>9} {:>14} {:>6} {:>8.1f}kJ\n", I64(j, "id"), S(j, "user").substr(0, 10),
                         name.empty() ? "-" : name, seen ? FormatSize(used) : "-", slice ? FormatSize(slice) : "whole",
                         slice && seen ? Bar(double(used), double(slice), 12) : "",
                         I64(j, "gpu_share_pct") ? std::to_string(I64(j, "gpu_share_pct")) + "%" : "-", U64(j, "energy_mj") / 1e6);
    }
  }
  return out;
}

}  // namespace pinpoint::cli
