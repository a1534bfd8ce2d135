#include "sched/cpu_pick.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>

namespace pinpoint::sched {

std::vector<int> PickCpus(const CpuTopology& topology, const std::set<int>& taken, int count,
                          std::optional<int> numa_node) {
  if (count < 1) return {};
  std::map<int, std::vector<int>> free_by_node;  // ascending ids in each
  size_t free = 0;
  for (int cpu : topology.cpus) {
    if (taken.count(cpu) > 0) continue;
    auto node = topology.node_of.find(cpu);
    free_by_node[node == topology.node_of.end() ? 0 : node->second].push_back(cpu);
    ++free;
  }
  if (free < static_cast<size_t>(count)) return {};
  // One node when one holds them all: the GPU's, else the one that fits best (fewest free CPUs:
  // roomier nodes stay whole for larger jobs). Else across nodes: the GPU's first, then the most
  // free (as few nodes as it can).
  auto fits = [&](int node) { return free_by_node[node].size() >= static_cast<size_t>(count); };
  bool one_node = std::any_of(free_by_node.begin(), free_by_node.end(),
                              [&](const auto& n) { return fits(n.first); });
  std::vector<std::tuple<int, int, int64_t, int>> keyed;  // sort key, then the node
  for (const auto& [node, cpus] : free_by_node) {
    bool gpu = numa_node && node == *numa_node;
    int64_t size = static_cast<int64_t>(cpus.size());
    if (one_node)
      keyed.emplace_back(fits(node) ? 0 : 1, gpu && fits(node) ? 0 : 1, fits(node) ? size : -size,
                         node);
    else
      keyed.emplace_back(gpu ? 0 : 1, 0, -size, node);
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<int> order;
  for (const auto& k : keyed) order.push_back(std::get<3>(k));
  std::vector<int> out;
  for (int node : order) {
    for (int cpu : free_by_node[node]) {
      if (out.size() == static_cast<size_t>(count)) break;
      out.push_back(cpu);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace pinpoint::sched
