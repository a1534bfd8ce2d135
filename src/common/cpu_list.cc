#include "common/cpu_list.h"

#include <dirent.h>
#include <sched.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <set>

#include "common/file_util.h"

namespace pinpoint {

namespace {

Result<int> CpuId(std::string_view text, std::string_view item) {
  int id = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || id < 0 ||
      id > kMaxCpuId)
    return InvalidArgument("'" + std::string(item) + "' is not a CPU id or range (0 to " +
                           std::to_string(kMaxCpuId) + ")");
  return id;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// A small file of /sys, or "" when it cannot be read.
std::string SysFile(const std::string& path) {
  auto text = ReadFileTail(path, 64 << 10);  // root's files: bounded all the same
  return text.ok() ? *text : "";
}

}  // namespace

Result<std::vector<int>> ParseCpuList(std::string_view text) {
  text = Trim(text);
  std::vector<bool> seen;
  std::vector<int> out;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    size_t dash = item.find('-');
    auto first = CpuId(item.substr(0, dash), item);
    if (!first.ok()) return first.status();
    int last = *first;
    if (dash != std::string_view::npos) {
      auto end = CpuId(item.substr(dash + 1), item);
      if (!end.ok()) return end.status();
      if (*end < *first) return InvalidArgument("'" + std::string(item) + "' runs backwards");
      last = *end;
    }
    if (seen.size() <= static_cast<size_t>(last)) seen.resize(static_cast<size_t>(last) + 1, false);
    for (int id = *first; id <= last; ++id) seen[static_cast<size_t>(id)] = true;
  }
  for (size_t id = 0; id < seen.size(); ++id)
    if (seen[id]) out.push_back(static_cast<int>(id));
  return out;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

CpuTopology ReadCpuTopology(const std::string& sys_root, bool within_affinity) {
  CpuTopology t;
  std::set<int> allowed;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (within_affinity && ::sched_getaffinity(0, sizeof(mask), &mask) == 0) {
    for (int id = 0; id < CPU_SETSIZE; ++id)
      if (CPU_ISSET(id, &mask)) allowed.insert(id);
  }
  auto online = ParseCpuList(SysFile(sys_root + "/devices/system/cpu/online"));
  if (online.ok() && !online->empty()) {
    for (int id : *online)
      if (allowed.empty() || allowed.count(id)) t.cpus.push_back(id);
  } else {
    t.cpus.assign(allowed.begin(), allowed.end());
  }
  std::string nodes = sys_root + "/devices/system/node";
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(nodes.c_str()), ::closedir);
  for (dirent* e = dir ? ::readdir(dir.get()) : nullptr; e != nullptr; e = ::readdir(dir.get())) {
    std::string name = e->d_name;
    if (name.rfind("node", 0) != 0) continue;
    auto node = CpuId(std::string_view(name).substr(4), name);
    if (!node.ok()) continue;
    auto cpus = ParseCpuList(SysFile(nodes + "/" + name + "/cpulist"));
    if (!cpus.ok()) continue;
    for (int id : *cpus) t.node_of[id] = *node;
  }
  return t;
}

CpuTopology WithoutCpus(CpuTopology topology, const std::vector<int>& cpus) {
  std::erase_if(topology.cpus,
                [&](int id) { return std::binary_search(cpus.begin(), cpus.end(), id); });
  return topology;
}

}  // namespace pinpoint
