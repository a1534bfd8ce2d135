// Which host CPUs a starting job gets (docs/scheduling.md "Host CPUs and memory"): pure. The
// scheduler counts CPUs (HostResources::cpus); this chooses which, when the job starts.
#pragma once

#include <optional>
#include <set>
#include <vector>

#include "common/cpu_list.h"

namespace pinpoint::sched {

// `count` CPUs of `topology` that no running job holds (`taken`), ascending, lowest ids first
// within a node: on one NUMA node when one holds them all (`numa_node`, the GPU's, when it does;
// else the best fit, the node with the fewest free CPUs that holds them), else across nodes, the
// GPU's first, then those with the most free. Empty when fewer than `count` are free or `count`
// < 1: the job then shares the host's CPUs under its cpu.max quota. Cost: O(CPUs log CPUs).
std::vector<int> PickCpus(const CpuTopology& topology, const std::set<int>& taken, int count,
                          std::optional<int> numa_node = std::nullopt);

}  // namespace pinpoint::sched
