// PickCpus (sched/cpu_pick.h): a starting job's own CPUs.
#include "sched/cpu_pick.h"

#include <gtest/gtest.h>

namespace pinpoint::sched {
namespace {

// Two NUMA nodes of four CPUs: 0-3 and 4-7.
CpuTopology TwoNodes() {
  CpuTopology t;
  for (int cpu = 0; cpu < 8; ++cpu) {
    t.cpus.push_back(cpu);
    t.node_of[cpu] = cpu / 4;
  }
  return t;
}

TEST(CpuPickTest, FreeCpusOnTheFewestNodesTheGpusFirst) {
  struct Row {
    std::set<int> taken;
    int count;
    std::optional<int> node;
    std::vector<int> want;
  };
  const Row rows[] = {
      {{}, 1, std::nullopt, {0}},
      {{}, 2, 1, {4, 5}},                    // the GPU's node
      {{0, 1}, 3, std::nullopt, {4, 5, 6}},  // the node with the most free: one node, not two
      {{0, 1, 4}, 2, 0, {2, 3}},
      {{0}, 1, std::nullopt, {1}},         // best fit: node 1 stays whole for a larger job
      {{0}, 3, std::nullopt, {1, 2, 3}},   // node 0 holds three: the best fit
      {{0, 1, 4, 5, 6}, 4, 0, {}},         // three left: too few, none (the quota instead)
      {{0, 1, 4, 5, 6}, 3, 1, {2, 3, 7}},  // across nodes when it must, the GPU's first
      {{}, 0, std::nullopt, {}},
      {{}, 9, std::nullopt, {}},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(PickCpus(TwoNodes(), row.taken, row.count, row.node), row.want)
        << "count " << row.count << ", " << row.taken.size() << " taken";
  }
}

TEST(CpuPickTest, ACpuNoNodeNamesIsOnNodeZero) {
  CpuTopology t;
  t.cpus = {0, 1, 2};
  t.node_of = {{2, 1}};
  EXPECT_EQ(PickCpus(t, {}, 1, 1), std::vector<int>{2});
  EXPECT_EQ(PickCpus(t, {}, 2, std::nullopt), (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace pinpoint::sched
