// Node::List's selections (ListQuery; the "queue" op's names, states and ids): in memory among
// active jobs, in the store's query with `all`, an array's id standing for its tasks in both.
#include <gtest/gtest.h>

#include "daemon/service/service_fixture.h"
#include "pinpoint/api_codec.h"

namespace pinpoint::daemon {
namespace {

class ListFilterTest : public ServiceFixture {
 protected:
  void SetUp() override { RestartOn(TwoGpus()); }
  JobId Submit(const std::string& name, int gpus) {
    JobRequest r = GpuSlice();
    r.name = name;
    r.gpus = gpus;
    r.gpu_mem_bytes = 0;
    auto job = node_->Submit(caller_, r);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->id : 0;
  }
  std::vector<JobId> Ids(bool all, const ListQuery& filter) {
    auto page = node_->List(all, std::nullopt, 0, 100, {}, filter);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    std::vector<JobId> ids;
    if (!page.ok()) return ids;
    for (const auto& job : page->jobs) ids.push_back(job.id);
    EXPECT_EQ(page->total, static_cast<int64_t>(ids.size())) << "the count is of what matches";
    return ids;
  }
};

TEST_F(ListFilterTest, ActiveJobsAreSelectedByNameStateAndIdAndAnArraysIdIsItsTasks) {
  JobId big = Submit("big", 2);
  node_->Step();
  JobId a = Submit("a", 1);
  JobRequest task = GpuSlice();
  task.name = "b";
  auto array = node_->SubmitArray(caller_, task, ArraySpec{{1, 2, 3}, 0});
  ASSERT_TRUE(array.ok());
  JobId first = array->first.id;
  EXPECT_EQ(Ids(false, {{"a", "big"}, {}, {}}), (std::vector<JobId>{big, a}));
  // The array's pending tasks are one row, its rest (array_rest.h), under its first task's id.
  EXPECT_EQ(Ids(false, {{}, {JobState::kPending}, {}}), (std::vector<JobId>{a, first}));
  EXPECT_EQ(Ids(false, {{}, {}, {first}}), (std::vector<JobId>{first})) << "the array's tasks";
  EXPECT_EQ(Ids(false, {{}, {}, {first + 1}}), (std::vector<JobId>{first}))
      << "a task's own id: the row it is in";
  ASSERT_TRUE(node_->HoldJobs(caller_, {first + 1}).front().ok());  // taken out: a job of its own
  EXPECT_EQ(Ids(false, {{}, {}, {first}}), (std::vector<JobId>{first, first + 1}));
  EXPECT_EQ(Ids(false, {{}, {}, {first + 1}}), (std::vector<JobId>{first + 1}))
      << "a task's own id: that task";
  EXPECT_EQ(Ids(false, {{}, {}, {first + 2}}), (std::vector<JobId>{first}));
  EXPECT_EQ(Ids(false, {{"b"}, {JobState::kRunning}, {}}), std::vector<JobId>{})
      << "every selection must match";
  EXPECT_EQ(Ids(false, {{}, {JobState::kRunning}, {big, a}}), (std::vector<JobId>{big}));
}

// A listing carries no enforcement lists unless asked (a page of 256 jobs stays small); `show`
// and a listing that asks do.
TEST_F(ListFilterTest, EnforcementListsAreInAListingOnlyWhenAsked) {
  JobId job = Submit("a", 1);
  node_->Step();
  auto listed = [&](bool ask) {
    QueueRequest q;
    q.enforcement = ask;
    std::optional<nlohmann::json> reply = service_->Handle(caller_, ToJson(q), 1);
    EXPECT_TRUE(reply.has_value());
    auto page = FromJson<QueueReply>(reply.value_or(nlohmann::json::object()));
    EXPECT_TRUE(page.ok()) << (reply ? reply->dump() : "");
    return page.ok() && page->jobs.size() == 1 ? page->jobs[0].enforcement.size() : size_t{99};
  };
  EXPECT_EQ(listed(false), 0u);
  EXPECT_GE(listed(true), 3u) << "devices, gpu_mem, cpus, mem, time";
  ShowRequest show;
  show.id = job;
  std::optional<nlohmann::json> shown = service_->Handle(caller_, ToJson(show), 1);
  ASSERT_TRUE(shown.has_value());
  auto reply = FromJson<ShowReply>(*shown);
  ASSERT_TRUE(reply.ok()) << shown->dump();
  EXPECT_GE(reply->job.enforcement.size(), 3u);
}

// A pending array is one row for its 900 tasks: what lies past a page is counted in jobs too,
// active or with `all` (newest first: the array is older than the page there).
TEST_F(ListFilterTest, WhatLiesPastAPageIsCountedInJobsAnArraysTasksEach) {
  auto array = node_->SubmitArray(caller_, GpuSlice(),
                                  ArraySpec{[] {
                                              std::vector<int> v;
                                              for (int i = 1; i <= 900; ++i) v.push_back(i);
                                              return v;
                                            }(),
                                            0});
  ASSERT_TRUE(array.ok());
  JobId a = Submit("a", 1), b = Submit("b", 1);
  auto page = node_->List(false, std::nullopt, 0, 1, {}, {});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->total, 3);
  EXPECT_EQ(page->tasks_after, 2) << "two jobs after the array's row";
  page = node_->List(false, std::nullopt, 1, 1, {}, {});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->jobs.front().id, a);
  EXPECT_EQ(page->tasks_after, 1);
  page = node_->List(true, std::nullopt, 0, 1, {}, {});  // newest first: b, then a, then the array
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->jobs.size(), 1u);
  EXPECT_EQ(page->jobs.front().id, b);
  EXPECT_EQ(page->tasks_after, 901) << "a, and the array's 900 tasks";
}

// A job that failed to launch stays in the active listing for kRecentFailureMs, with its reason,
// in id order, for its own user's listing and filters: it does not vanish (Slurm's MinJobAge).
TEST_F(ListFilterTest, AJobThatFailedToLaunchStaysListedForAWhile) {
  JobId before = Submit("before", 0);
  node_->Step();
  launcher_.FailLaunches(IoError("exec failed: Permission denied"));
  JobId failed = Submit("broken", 0);
  node_->Step();
  ASSERT_EQ(node_->Get(failed)->reason, Reason::kLaunchFailed);
  launcher_.FailLaunches(Status::Ok());
  JobId after = Submit("after", 0);
  node_->Step();
  EXPECT_EQ(Ids(false, {}), (std::vector<JobId>{before, failed, after}));
  auto page = node_->List(false, std::nullopt, 1, 1, {}, {});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->jobs.size(), 1u);
  EXPECT_EQ(page->jobs.front().state, JobState::kFailed);
  EXPECT_EQ(page->jobs.front().reason, Reason::kLaunchFailed);
  EXPECT_EQ(Ids(false, {{"broken"}, {}, {}}), std::vector<JobId>{failed});
  EXPECT_EQ(Ids(false, {{}, {JobState::kRunning}, {}}), (std::vector<JobId>{before, after}));
  auto others = node_->List(false, caller_.uid + 1, 0, 100, {}, {});
  ASSERT_TRUE(others.ok());
  EXPECT_TRUE(others->jobs.empty()) << "another user's listing";
  clock_.AdvanceMs(kRecentFailureMs + 1);
  EXPECT_EQ(Ids(false, {}), (std::vector<JobId>{before, after})) << "gone once its time has passed";
}

// Attack: user A's many launch failures (more than a user's bound) must not push user B's failed
// job out of the listing within kRecentFailureMs (a list for the whole node did, in one pass).
TEST_F(ListFilterTest, OneUsersLaunchFailuresDoNotHideAnothers) {
  api::Caller b = caller_;
  b.uid = b.gid = caller_.uid + 1;
  JobRequest cpu = GpuSlice();
  cpu.gpus = 0;
  cpu.gpu_mem_bytes = 0;
  launcher_.FailLaunches(IoError("exec failed: Permission denied"));
  cpu.name = "b-job";
  JobId bs = node_->Submit(b, cpu)->id;
  node_->Step();
  cpu.name = "a-job";
  constexpr int kMany = 150;  // more than a user's bound (kRecentFailuresPerUser)
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < kMany; ++i) ASSERT_TRUE(node_->Submit(caller_, cpu).ok());
    node_->Step();
    clock_.AdvanceMs(1000);
  }
  ASSERT_EQ(node_->Get(bs)->reason, Reason::kLaunchFailed);
  EXPECT_EQ(Ids(false, {{"b-job"}, {}, {}}), std::vector<JobId>{bs})
      << "B's failed job is still listed";
  auto bs_page = node_->List(false, b.uid, 0, 100, {}, {});
  ASSERT_TRUE(bs_page.ok());
  ASSERT_EQ(bs_page->jobs.size(), 1u);
  EXPECT_EQ(bs_page->jobs.front().id, bs);
  auto as_page = node_->List(false, caller_.uid, 0, 10, {}, {{}, {JobState::kFailed}, {}});
  ASSERT_TRUE(as_page.ok());
  EXPECT_GT(as_page->total, 0);
  EXPECT_LT(as_page->total, kMany) << "A's own failures, bounded";
}

TEST_F(ListFilterTest, WithAllTheStoreSelectsStatesAndIdsAndRefusesNames) {
  JobId done = Submit("done", 1);
  JobRequest task = GpuSlice();
  auto array = node_->SubmitArray(caller_, task, ArraySpec{{1, 2, 3}, 0});
  ASSERT_TRUE(array.ok());
  JobId first = array->first.id;
  JobId later = Submit("later", 1);
  ASSERT_TRUE(node_->Cancel(caller_, {done, first + 1}).front().ok());
  node_->Step();
  EXPECT_EQ(Ids(true, {{}, {JobState::kCancelled}, {}}), (std::vector<JobId>{done, first + 1}));
  EXPECT_EQ(Ids(true, {{}, {}, {first}}), (std::vector<JobId>{first, first + 1, first + 2}))
      << "the array's tasks";
  EXPECT_EQ(Ids(true, {{}, {}, {later, done}}), (std::vector<JobId>{done, later}));
  EXPECT_EQ(Ids(true, {{}, {JobState::kCancelled}, {first}}), (std::vector<JobId>{first + 1}));
  EXPECT_EQ(node_->List(true, std::nullopt, 0, 100, {}, {{"done"}, {}, {}}).status().code(),
            Code::kInvalidArgument);
  auto ended =
      node_->List(false, std::nullopt, 0, 100, {0, std::nullopt}, {{}, {JobState::kPending}, {}});
  ASSERT_TRUE(ended.ok());
  EXPECT_EQ(ended->total, 0) << "a listing of ended jobs has no pending one";
}

TEST_F(ListFilterTest, StartEstimatesComeFromTheTimeLimitsOfWhatRunsAndWaits) {
  JobRequest big = GpuSlice();
  big.gpus = 2;
  big.gpu_mem_bytes = 0;
  big.time_limit_s = 3600;
  ASSERT_TRUE(node_->Submit(caller_, big).ok());
  node_->Step();
  clock_.AdvanceMs(600'000);  // it has run ten minutes: fifty are left
  JobRequest next = big;
  next.time_limit_s = 1800;
  JobId second = node_->Submit(caller_, next)->id;
  JobId third = node_->Submit(caller_, GpuSlice())->id;  // no time limit: it runs after `second`
  JobId held = node_->Submit(caller_, GpuSlice(), std::nullopt, /*hold=*/true)->id;
  JobRequest cpu = GpuSlice();
  cpu.gpus = 0;
  cpu.gpu_mem_bytes = 0;
  JobId fits = node_->Submit(caller_, cpu)->id;  // needs no GPU: starts at the next pass
  ListQuery query;
  query.estimate_starts = true;
  auto page = node_->List(false, std::nullopt, 0, 100, {}, query);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->starts.size(), 4u) << "one per pending job of the page";
  int64_t now = clock_.NowMs();
  EXPECT_EQ(page->starts[0].id, second);
  EXPECT_EQ(page->starts[0].start_ms, now + 50 * 60'000);
  EXPECT_EQ(page->starts[1].id, third);
  EXPECT_EQ(page->starts[1].start_ms, now + 80 * 60'000)
      << "after the half hour of the job before it";
  EXPECT_EQ(page->starts[2].id, held);
  EXPECT_EQ(page->starts[2].why, "held");
  EXPECT_EQ(page->starts[3].id, fits);
  EXPECT_EQ(page->starts[3].start_ms, now);
  EXPECT_TRUE(node_->List(false, std::nullopt, 0, 100)->starts.empty()) << "only when asked";

  // Asked again a second later, after a new job: the same play (a stream of requests, and of
  // changes between them, costs one play in kStartEstimateReuseMs), where a new play would start
  // the CPU job at the new now.
  clock_.AdvanceMs(1000);
  JobId last = node_->Submit(caller_, GpuSlice())->id;
  auto again = node_->List(false, std::nullopt, 0, 100, {}, query);
  ASSERT_EQ(again->starts.size(), 5u);
  EXPECT_EQ(again->starts[3].start_ms, now);
  EXPECT_EQ(again->starts[4].id, last);
  EXPECT_FALSE(again->starts[4].start_ms.has_value());
  EXPECT_EQ(again->starts[4].why, "submitted after the last estimate: ask again in a few seconds");
  // Once that time has passed, the next request plays again.
  clock_.AdvanceMs(kStartEstimateReuseMs);
  auto later = node_->List(false, std::nullopt, 0, 100, {}, query);
  EXPECT_EQ(later->starts[3].start_ms, now + 1000 + kStartEstimateReuseMs);
  EXPECT_TRUE(later->starts[4].start_ms.has_value());
}

}  // namespace
}  // namespace pinpoint::daemon
