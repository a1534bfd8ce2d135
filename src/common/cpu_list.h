// Host CPUs by id (docs/scheduling.md "Host CPUs and memory"): lists as the kernel writes them
// ("0-3,8,10-11": /sys/devices/system/cpu/online, cpuset.cpus, Cpus_allowed_list) and the CPUs
// this process may use with the NUMA node of each.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pinpoint/status.h"

namespace pinpoint {

// CPU ids are 0 to kMaxCpuId: what the lists read here may name.
inline constexpr int kMaxCpuId = 65535;

// "0-3,8" -> {0, 1, 2, 3, 8}: ascending and distinct. Surrounding whitespace (a file's newline) is
// ignored; "" is no CPU. Errors: kInvalidArgument naming the item (not a number, a range that runs
// backwards, an id above kMaxCpuId).
Result<std::vector<int>> ParseCpuList(std::string_view text);
// {0, 1, 2, 3, 8} -> "0-3,8": ascending distinct ids as the kernel writes them; "" for none.
std::string FormatCpuList(const std::vector<int>& cpus);

// The CPUs a job can be given and where each is.
struct CpuTopology {
  std::vector<int> cpus;       // ascending: online and in this process's affinity
  std::map<int, int> node_of;  // cpu -> NUMA node; a CPU no node names is on node 0
};
// Read from `sys_root` (/sys: devices/system/cpu/online, devices/system/node/node*/cpulist) and,
// when `within_affinity`, this process's affinity (sched_getaffinity). Files that cannot be read
// count as absent: the CPUs are then those of the affinity alone, all on node 0. Bounded reads.
CpuTopology ReadCpuTopology(const std::string& sys_root = "/sys", bool within_affinity = true);
// `topology` less `cpus` (ascending: a site's system CPUs).
CpuTopology WithoutCpus(CpuTopology topology, const std::vector<int>& cpus);

}  // namespace pinpoint
