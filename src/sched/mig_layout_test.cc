// The MIG layout planner, table-driven on NVIDIA's A100 and H100 profiles and placements.
#include "sched/mig_layout.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pinpoint::sched::mig {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr int64_t kNow = 10'000'000;
constexpr int64_t kOld = kNow - 3'600'000;  // an hour ago: past both minimums

// "+g0:1g.10gb@0/j1" a creation, "-g0#3" a destruction, "=j1#2" an existing instance, "?j4"
// unserved,
// "~g0:7g.80gb@0/j4" the placement drained for a want.
std::string Summary(const Plan& plan) {
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : " ") + s; };
  for (const Destroy& d : plan.destroys)
    add("-g" + std::to_string(d.gpu) + "#" + std::to_string(d.instance_id));
  for (const Create& c : plan.creates)
    add("+g" + std::to_string(c.gpu) + ":" + c.profile + "@" + std::to_string(c.start) + "/j" +
        std::to_string(c.for_job));
  for (const auto& [job, id] : plan.existing)
    add("=j" + std::to_string(job) + "#" + std::to_string(id));
  for (JobId id : plan.unserved) add("?j" + std::to_string(id));
  if (plan.drain)
    add("~g" + std::to_string(plan.drain->gpu) + ":" + plan.drain->profile + "@" +
        std::to_string(plan.drain->start) + "/j" + std::to_string(plan.drain->for_job));
  return out;
}

Instance Busy(int id, const char* profile, int start) {
  return Instance{id, profile, start, 1, kOld, kOld};
}
Instance Idle(int id, const char* profile, int start, int64_t since = kOld) {
  return Instance{id, profile, start, 0, since, since};
}
// A suspended job's instance, idle meanwhile: it resumes there.
Instance Kept(int id, const char* profile, int start) {
  Instance in = Idle(id, profile, start);
  in.kept = true;
  return in;
}
Want Mem(JobId id, uint64_t gib) { return Want{id, gib * kGiB, ""}; }
Want Named(JobId id, const char* profile) { return Want{id, 0, profile}; }
Gpu A100(int index, std::vector<Instance> instances = {}) {
  return Gpu{index, A100_80GB(), std::move(instances)};
}
Gpu H100(int index, std::vector<Instance> instances = {}) {
  return Gpu{index, H100_80GB(), std::move(instances)};
}

struct Case {
  const char* name;
  std::vector<Gpu> gpus;
  std::vector<Want> queue;
  const char* want;
};

TEST(MigLayoutTest, Table) {
  const Case cases[] = {
      {"small slices pack into one GPU, lowest placements first",
       {A100(0), A100(1)},
       {Mem(1, 5), Mem(2, 5), Mem(3, 5)},
       "+g0:1g.10gb@0/j1 +g0:1g.10gb@1/j2 +g0:1g.10gb@2/j3"},
      {"the smallest profile with the memory, fewest compute slices among equals",
       {A100(0)},
       {Mem(1, 15)},
       "+g0:1g.20gb@0/j1"},
      {"an idle instance of the profile serves: nothing created",
       {A100(0, {Idle(7, "3g.40gb", 4)})},
       {Mem(1, 30)},
       "=j1#7"},
      {"a new right-sized instance before a larger idle one",
       {A100(0, {Idle(7, "7g.80gb", 0)}), A100(1)},
       {Mem(1, 5)},
       "+g1:1g.10gb@0/j1"},
      {"no room for a new one: the smallest larger idle instance",
       {A100(0, {Idle(7, "4g.40gb", 0), Idle(8, "3g.40gb", 4)})},
       {Mem(1, 5)},
       "=j1#8"},
      {"the GPU already in use is packed first",
       {A100(0), A100(1, {Busy(1, "1g.10gb", 0)})},
       {Mem(1, 5)},
       "+g1:1g.10gb@1/j1"},
      {"3g goes at 0 or 4 only: a busy 1g at 4 leaves 0",
       {A100(0, {Busy(1, "1g.10gb", 4)})},
       {Mem(1, 30)},
       "+g0:3g.40gb@0/j1"},
      {"busy 1g at 1 and 5: six free slices, no 3g placement",
       {A100(0, {Busy(1, "1g.10gb", 1), Busy(2, "1g.10gb", 5)})},
       {Mem(1, 30)},
       "?j1 ~g0:3g.40gb@0/j1"},
      {"an instance a job runs on is never destroyed",
       {A100(0, {Busy(1, "7g.80gb", 0)})},
       {Mem(1, 5)},
       "?j1 ~g0:1g.10gb@0/j1"},
      {"old idle instances make room, fewest slices destroyed",
       {A100(0, {Idle(1, "1g.10gb", 0), Idle(2, "1g.10gb", 1), Busy(3, "2g.20gb", 2),
                 Idle(4, "1g.10gb", 4)})},
       {Mem(1, 30)},
       "-g0#4 +g0:3g.40gb@4/j1"},
      {"an idle instance younger than the minimum lifetime stays",
       {A100(0, {Idle(1, "4g.40gb", 0, kNow - 1000), Busy(2, "3g.40gb", 4)})},
       {Mem(1, 70)},
       "?j1 ~g0:7g.80gb@0/j1"},
      {"a larger demand than any profile is the scheduler's (a whole GPU)",
       {A100(0)},
       {Mem(1, 100)},
       "?j1"},
      {"a named profile",
       {A100(0)},
       {Named(1, "2g.20gb"), Named(2, "2g.20gb")},
       "+g0:2g.20gb@0/j1 +g0:2g.20gb@2/j2"},
      {"a profile the model lacks", {A100(0)}, {Named(1, "1g.12gb")}, "?j1"},
      {"H100: seven 1g instances, the eighth waits",
       {H100(0)},
       {Mem(1, 9), Mem(2, 9), Mem(3, 9), Mem(4, 9), Mem(5, 9), Mem(6, 9), Mem(7, 9), Mem(8, 9)},
       "+g0:1g.10gb@0/j1 +g0:1g.10gb@1/j2 +g0:1g.10gb@2/j3 +g0:1g.10gb@3/j4 +g0:1g.10gb@4/j5 "
       "+g0:1g.10gb@5/j6 "
       "+g0:1g.10gb@6/j7 ?j8"},
      {"one idle instance serves one want only",
       {A100(0, {Idle(5, "7g.80gb", 0)})},
       {Mem(1, 70), Mem(2, 70)},
       "=j1#5 ?j2 ~g0:7g.80gb@0/j2"},
      {"a destroyed instance serves no one else",
       {A100(0, {Idle(5, "1g.10gb", 0), Busy(6, "3g.40gb", 4)})},
       {Named(1, "4g.40gb"), Mem(2, 5)},
       "-g0#5 +g0:4g.40gb@0/j1 ?j2 ~g0:1g.10gb@4/j2"},
      // Draining for a whole-GPU want: the GPU with the fewest busy slices; later wants keep off
      // it.
      {"a 7g behind busy 1g's drains the GPU with the fewest busy, later wants keep off it",
       {A100(0, {Busy(1, "1g.10gb", 0), Busy(2, "1g.10gb", 1), Idle(3, "1g.10gb", 2)}),
        A100(1,
             {Busy(1, "1g.10gb", 0), Idle(2, "1g.10gb", 1, kNow - 1000), Idle(3, "1g.10gb", 2)})},
       {Mem(1, 70), Mem(2, 5), Mem(3, 5)},
       "-g1#3 +g0:1g.10gb@3/j3 =j2#3 ?j1 ~g1:7g.80gb@0/j1"},
      {"a drained placement that empties at once is made at once",
       {A100(0, {Idle(1, "1g.10gb", 0), Idle(2, "3g.40gb", 4)}), A100(1, {Busy(1, "1g.10gb", 3)})},
       {Mem(1, 70)},
       "-g0#1 -g0#2 +g0:7g.80gb@0/j1"},
      {"a suspended job's instance is neither destroyed nor drained: the drain goes elsewhere",
       {A100(0, {Kept(1, "1g.10gb", 0)}), A100(1, {Busy(1, "1g.10gb", 6)})},
       {Mem(1, 70)},
       "?j1 ~g1:7g.80gb@0/j1"},
      {"nor drained where it is the only placement, while another may serve there meanwhile",
       {A100(0, {Kept(1, "1g.10gb", 0)})},
       {Mem(1, 70), Mem(2, 5)},
       "=j2#1 ?j1"},
      {"one drain a plan: the second big want waits",
       {A100(0, {Busy(1, "1g.10gb", 0)}), A100(1, {Busy(1, "1g.10gb", 6)})},
       {Mem(1, 70), Mem(2, 70)},
       "?j1 ?j2 ~g0:7g.80gb@0/j1"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Summary(PlanLayout(c.gpus, c.queue, kNow)), c.want) << c.name;
  }
}

TEST(MigLayoutTest, TheProfileTablesFollowNvidiasPlacements) {
  for (const Model& m : {A100_40GB(), A100_80GB(), H100_80GB()}) {
    SCOPED_TRACE(m.name);
    ASSERT_EQ(m.profiles.size(), 6u);
    // How many of each fit on an empty GPU, as the MIG user guide lists: 7, 4, 3, 2, 1, 1.
    const int counts[] = {7, 4, 3, 2, 1, 1};
    for (size_t i = 0; i < m.profiles.size(); ++i) {
      std::vector<Want> queue;
      for (int j = 1; j <= 8; ++j) queue.push_back(Named(j, m.profiles[i].name.c_str()));
      Plan plan = PlanLayout({Gpu{0, m, {}}}, queue, kNow);
      EXPECT_EQ(static_cast<int>(plan.creates.size()), counts[i]) << m.profiles[i].name;
    }
  }
  EXPECT_NE(A100_40GB().Find("3g.20gb"), nullptr);
  EXPECT_NE(H100_80GB().Find("7g.80gb"), nullptr);
}

TEST(MigLayoutTest, AnInstanceCoversItsProfilesSlicesAndOneWhenItsProfileIsUnknown) {
  Model m = A100_40GB();
  EXPECT_EQ(m.SlicesAt("3g.20gb", 4), (partition::SliceRange{4, 8}));
  EXPECT_EQ(m.SlicesAt("1g.5gb", 6), (partition::SliceRange{6, 7}));
  EXPECT_EQ(m.SlicesAt("9g.99gb", 2), (partition::SliceRange{2, 3})) << "it still holds its start";
}

TEST(MigLayoutTest, ALayoutThatServesTheQueueIsLeftAlone) {
  // Hysteresis: the same queue against the layout the last plan made changes nothing.
  std::vector<Want> queue = {Mem(1, 5), Mem(2, 30), Mem(3, 15)};
  Plan first = PlanLayout({A100(0)}, queue, kNow);
  ASSERT_TRUE(first.destroys.empty());
  Gpu made = A100(0);
  int id = 1;
  for (const Create& c : first.creates)
    made.instances.push_back(Idle(id++, c.profile.c_str(), c.start, kNow));
  Plan again = PlanLayout({made}, queue, kNow + 1);
  EXPECT_TRUE(again.creates.empty()) << Summary(again);
  EXPECT_TRUE(again.destroys.empty()) << Summary(again);
  EXPECT_EQ(again.existing.size(), 3u);
}

}  // namespace
}  // namespace pinpoint::sched::mig
