// Table-driven tests of dependencies (submit --after, --afterok) in Schedule: which pending jobs
// wait "dependency", which can never start, and that a chain is decided in one pass.
#include "sched/dependencies.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sched/sched_test_util.h"

namespace pinpoint::sched {
namespace {

using ::testing::HasSubstr;
using namespace ::pinpoint::sched::testing;  // NOLINT(google-build-using-namespace)

Demand After(Demand d, std::vector<JobId> ids) {
  d.after = std::move(ids);
  return d;
}

Demand AfterOk(Demand d, std::vector<JobId> ids) {
  d.afterok = std::move(ids);
  return d;
}

// "3 4": the ids the plan says can never start, in its order.
std::string NeverStart(const Plan& plan) {
  std::string out;
  for (const Wait& w : plan.never_start) {
    out += (out.empty() ? "" : " ") + std::to_string(w.id);
    EXPECT_EQ(w.reason, Reason::kDependencyNeverSatisfied);
  }
  return out;
}

struct DependencyCase {
  PlanCase plan;
  std::string never_start;  // NeverStart(plan)
};

void PrintTo(const DependencyCase& c, std::ostream* os) { *os << c.plan.name; }

std::vector<DependencyCase> DependencyCases() {
  const auto kOk = JobState::kCompleted;
  const auto kFailed = JobState::kFailed;
  const auto kCancelled = JobState::kCancelled;
  const auto kRunning = JobState::kRunning;
  return {
      {{"after_a_running_job_waits_and_reserves_nothing",
        {Node({Gpu(80)}),
         {Running(1, 1, {WholeOn(0)})},
         {After(Whole(2, 1), {1}), Slice(3, 1, 10)},
         {{1, kRunning}}},
        "2:dependency 3:resources",
        "3:0",
        {{2, "waits for job 1 to end (after)"}}},
       ""},
      {{"after_is_met_by_any_end",
        {Node({Gpu(80), Gpu(80)}),
         {},
         {After(Whole(3, 1), {1}), After(Whole(4, 1), {2})},
         {{1, kFailed}, {2, kCancelled}}},
        "3@0 4@1"},
       ""},
      {{"afterok_is_met_by_completion_only",
        {Node({Gpu(80)}), {}, {AfterOk(Whole(2, 1), {1})}, {{1, kOk}}},
        "2@0"},
       ""},
      {{"afterok_on_a_failed_job_never_starts_even_held",
        {Node({Gpu(80)}),
         {},
         {AfterOk(Whole(2, 1), {1}), Held(AfterOk(Whole(3, 1), {1})), Whole(4, 1)},
         {{1, kFailed}}},
        "4@0"},
       "2 3"},
      {{"a_chain_ends_in_one_pass",  // 1 failed; 2 afterok 1; 3 afterok 2; 4 after 3 is then met
        {Node({Gpu(80)}),
         {},
         {AfterOk(Whole(3, 1), {2}), AfterOk(Whole(2, 1), {1}), After(Whole(4, 1), {3})},
         {{1, kFailed}}},
        "4@0"},
       "2 3"},
      {{"a_pending_dependency_is_not_ended",
        {Node({Gpu(80)}),
         {Running(9, 1, {WholeOn(0)})},
         {Whole(1, 1), AfterOk(CpuOnly(2, 1), {1})},
         {}},
        "1:resources 2:dependency",
        "1:0",
        {{2, "waits for job 1 to complete (afterok)"}}},
       ""},
      {{"a_job_the_store_no_longer_has_counts_as_completed",  // retention purges only ended jobs
        {Node({}), {}, {AfterOk(CpuOnly(5, 1), {1}), After(CpuOnly(6, 1), {2})}, {}},
        "5@ 6@"},
       ""},
      {{"every_dependency_must_be_met_and_the_detail_counts_the_rest",
        {Node({}),
         {},
         {After(AfterOk(CpuOnly(5, 1), {1, 2}), {3, 4})},
         {{1, kOk}, {2, kRunning}, {3, kFailed}, {4, kRunning}}},
        "5:dependency",
        "-",
        {{5, "waits for job 2 to complete (afterok) (and 1 more job)"}}},
       ""},
      {{"the_first_failed_dependency_is_named",
        {Node({}),
         {},
         {AfterOk(CpuOnly(5, 1), {1, 2, 3})},
         {{1, kOk}, {2, kRunning}, {3, kCancelled}}},
        "",
        "-"},
       "5"},
      {{"priority_does_not_skip_a_dependency",
        {Node({Gpu(80)}),
         {},
         {WithPriority(After(Whole(5, 1), {1}), 100), Whole(6, 1)},
         {{1, kRunning}}},
        "6@0 5:dependency"},
       ""},
  };
}

class DependencyPlanTest : public ::testing::TestWithParam<DependencyCase> {};

TEST_P(DependencyPlanTest, ProducesPlan) {
  const DependencyCase& c = GetParam();
  ExpectPlan(c.plan);
  EXPECT_EQ(NeverStart(Schedule(c.plan.snapshot)), c.never_start);
}

INSTANTIATE_TEST_SUITE_P(Dependencies, DependencyPlanTest, ::testing::ValuesIn(DependencyCases()),
                         [](const auto& info) { return info.param.plan.name; });

TEST(JudgeDependenciesTest, NeverStartDetailsNameTheJobAndStayOneShortLine) {
  std::vector<Demand> chain;
  for (JobId id = 2; id <= 200; ++id) chain.push_back(AfterOk(CpuOnly(id, 1), {id - 1}));
  auto verdicts = JudgeDependencies(chain, {{1, JobState::kFailed}});
  ASSERT_EQ(verdicts.size(), 199u);
  EXPECT_EQ(verdicts[2].kind, DependencyVerdict::Kind::kNever);
  EXPECT_EQ(verdicts[2].detail, "job 1 failed, and afterok needs it to complete");
  EXPECT_EQ(verdicts[200].kind, DependencyVerdict::Kind::kNever);
  EXPECT_EQ(verdicts[200].detail, "job 199 can never start, and afterok needs it to complete");
}

TEST(JudgeDependenciesTest, DemandsWithoutDependenciesGetNoVerdict) {
  auto verdicts = JudgeDependencies({CpuOnly(1, 1), After(CpuOnly(2, 1), {1})}, {});
  EXPECT_EQ(verdicts.count(1), 0u);
  ASSERT_EQ(verdicts.count(2), 1u);
  EXPECT_EQ(verdicts[2].kind, DependencyVerdict::Kind::kWaiting);
  EXPECT_THAT(verdicts[2].detail, HasSubstr("job 1"));
}

}  // namespace
}  // namespace pinpoint::sched
