#include "watch/accountant.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace pinpoint::watch {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

WatchedJob Slice(JobId id, int gpu, uint64_t budget, int share = 0, double fraction = 1.0) {
  WatchedJob j;
  j.id = id;
  j.slots.push_back({gpu, budget, share, fraction, false});
  return j;
}

WatchedJob Whole(JobId id, int gpu) {
  WatchedJob j;
  j.id = id;
  j.slots.push_back({gpu, 0, 0, 1.0, true});
  return j;
}

GpuReading Reading(int gpu, uint64_t energy_mj, std::vector<gpu::GpuProcess> procs = {}) {
  GpuReading r;
  r.gpu_index = gpu;
  r.ok = true;
  r.sample.index = gpu;
  r.sample.energy_mj = energy_mj;
  r.sample.processes = std::move(procs);
  return r;
}

gpu::GpuProcess Proc(int64_t pid, uint64_t bytes) {
  gpu::GpuProcess p;
  p.pid = pid;
  p.used_bytes = bytes;
  p.mps_client = true;
  return p;
}

// The spread order reads how busy a GPU was over about the last minute: an average that moves
// with each poll by the share of the minute the poll covers, and ignores a GPU that reports none.
TEST(AccountantTest, BusyIsTheUtilisationAveragedOverAboutAMinute) {
  Accountant acc(AccountantOptions{});
  auto poll = [&](int64_t t, int util) {
    GpuReading r = Reading(0, 0);
    r.sample.utilization_pct = util;
    acc.Update(t, {}, {r}, {});
    return acc.gpus().at(0).busy_pct;
  };
  EXPECT_EQ(poll(0, 100), 100);
  EXPECT_EQ(poll(30'000, 0), 50);    // half a minute of 0 halves it
  EXPECT_EQ(poll(30'000, 0), 50);    // no time passed: no weight
  EXPECT_EQ(poll(150'000, 20), 20);  // a gap longer than the window: the new reading alone
  EXPECT_EQ(poll(151'000, -1), 20);  // not reported: kept
  Accountant fresh(AccountantOptions{});
  fresh.Update(0, {}, {Reading(0, 0)}, {});
  EXPECT_LT(fresh.gpus().at(0).busy_pct, 0) << "no utilisation reported yet";
}

TEST(AccountantTest, MemoryIsSummedOverAJobsProcessesAndItsPeakKept) {
  Accountant acc({5.0, 0});
  std::vector<WatchedJob> jobs = {Slice(1, 0, 8 * kGiB), Slice(2, 0, 8 * kGiB)};
  std::map<int64_t, JobId> owners = {{100, 1}, {101, 1}, {200, 2}};
  acc.Update(
      0, jobs,
      {Reading(0, 0, {Proc(100, 2 * kGiB), Proc(101, 3 * kGiB), Proc(200, kGiB), Proc(999, kGiB)})},
      owners);
  EXPECT_EQ(acc.Usage(1)->gpu_mem_now_bytes, 5 * kGiB);
  EXPECT_EQ(acc.Usage(2)->gpu_mem_now_bytes, kGiB);
  EXPECT_EQ(acc.gpus().at(0).unowned_bytes, kGiB);  // pid 999 belongs to no job
  acc.Update(1000, jobs, {Reading(0, 0, {Proc(100, kGiB)})}, owners);
  EXPECT_EQ(acc.Usage(1)->gpu_mem_now_bytes, kGiB);
  EXPECT_EQ(acc.Usage(1)->gpu_mem_peak_bytes, 5 * kGiB);
  EXPECT_EQ(acc.Usage(1)->samples, 2);
  EXPECT_FALSE(acc.Usage(3).has_value());
}

TEST(AccountantTest, MultiProcessJobOverItsBudgetIsReportedAfterTheGrace) {
  Accountant acc({5.0, 2000});
  std::vector<WatchedJob> jobs = {Slice(1, 0, 4 * kGiB), Slice(2, 0, 4 * kGiB)};
  std::map<int64_t, JobId> owners = {{100, 1}, {101, 1}, {200, 2}};
  // Each process of job 1 is under the budget; together they are 5 GiB of its 4 GiB.
  auto over = [&](int64_t t) {
    return acc.Update(
        t, jobs,
        {Reading(0, 0, {Proc(100, 2560ull << 20), Proc(101, 2560ull << 20), Proc(200, 3 * kGiB)})},
        owners);
  };
  EXPECT_TRUE(over(0).over_budget.empty());     // first seen over: the grace starts
  EXPECT_TRUE(over(1000).over_budget.empty());  // 1 s of 2 s
  PollResult r = over(2000);
  ASSERT_EQ(r.over_budget.size(), 1u);
  EXPECT_EQ(r.over_budget[0].id, 1);
  EXPECT_EQ(r.over_budget[0].gpu_index, 0);
  EXPECT_EQ(r.over_budget[0].used_bytes, 5 * kGiB);
  EXPECT_EQ(r.over_budget[0].budget_bytes, 4 * kGiB);
  EXPECT_EQ(r.over_budget[0].processes, 2);
}

TEST(AccountantTest, NoBreachUnderTheBudgetOrWithinTheTolerance) {
  Accountant acc({5.0, 0});
  std::vector<WatchedJob> jobs = {Slice(1, 0, 10 * kGiB)};
  std::map<int64_t, JobId> owners = {{100, 1}, {101, 1}};
  // 10.4 GiB is 4% over 10 GiB: inside the 5% tolerance.
  uint64_t within = 10 * kGiB + (410ull << 20);
  for (int64_t t = 0; t < 10000; t += 1000)
    EXPECT_TRUE(
        acc.Update(t, jobs, {Reading(0, 0, {Proc(100, within / 2), Proc(101, within / 2)})}, owners)
            .over_budget.empty());
  // Whole GPUs have no budget.
  Accountant whole({0.0, 0});
  EXPECT_TRUE(whole.Update(0, {Whole(1, 0)}, {Reading(0, 0, {Proc(100, 80 * kGiB)})}, owners)
                  .over_budget.empty());
}

TEST(AccountantTest, DippingUnderTheBudgetRestartsTheGrace) {
  Accountant acc({0.0, 1500});
  std::vector<WatchedJob> jobs = {Slice(1, 0, 2 * kGiB)};
  std::map<int64_t, JobId> owners = {{100, 1}};
  auto poll = [&](int64_t t, uint64_t bytes) {
    return acc.Update(t, jobs, {Reading(0, 0, {Proc(100, bytes)})}, owners);
  };
  EXPECT_TRUE(poll(0, 3 * kGiB).over_budget.empty());
  EXPECT_TRUE(poll(1000, kGiB).over_budget.empty());
  EXPECT_TRUE(poll(2000, 3 * kGiB).over_budget.empty());
  EXPECT_TRUE(poll(3000, 3 * kGiB).over_budget.empty());
  EXPECT_EQ(poll(3500, 3 * kGiB).over_budget.size(), 1u);
}

TEST(AccountantTest, EnergyDeltaIsSplitByShareAndTheSplitSumsToTheDelta) {
  Accountant acc({5.0, 0});
  // Job 1 holds 50% of the SMs, job 2 20%, job 3 no share (an even third of the GPU).
  std::vector<WatchedJob> jobs = {Slice(1, 0, kGiB, 50), Slice(2, 0, kGiB, 20),
                                  Slice(3, 0, kGiB, 0)};
  acc.Update(0, jobs, {Reading(0, 1'000'000)}, {});
  EXPECT_EQ(acc.Usage(1)->energy_mj, 0u);  // no earlier counter: nothing to split yet
  acc.Update(1000, jobs, {Reading(0, 1'000'000 + 103'333)}, {});
  double third = 100.0 / 3;
  double total = 50 + 20 + third;
  EXPECT_EQ(acc.Usage(1)->energy_mj, static_cast<uint64_t>(std::llround(103'333 * 50 / total)));
  EXPECT_EQ(acc.Usage(2)->energy_mj, static_cast<uint64_t>(std::llround(103'333 * 20 / total)));
  uint64_t sum = acc.Usage(1)->energy_mj + acc.Usage(2)->energy_mj + acc.Usage(3)->energy_mj;
  EXPECT_NEAR(static_cast<double>(sum), 103'333.0, 2.0);  // rounding of three parts
  EXPECT_DOUBLE_EQ(acc.gpus().at(0).charged_energy_mj, 103'333.0);
  EXPECT_DOUBLE_EQ(acc.gpus().at(0).idle_energy_mj, 0.0);
}

TEST(AccountantTest, EnergyOverManyPollsSumsToTheCounterDeltaExactlyWithIdleSeparate) {
  Accountant acc({5.0, 0});
  std::vector<WatchedJob> two = {Slice(1, 0, kGiB, 30), Slice(2, 0, kGiB)};
  std::vector<WatchedJob> one = {Slice(2, 0, kGiB)};
  uint64_t counter = 5'000'000;
  acc.Update(0, {}, {Reading(0, counter)}, {});
  counter += 70'000;  // idle second
  acc.Update(1000, {}, {Reading(0, counter)}, {});
  uint64_t busy = 0;
  for (int i = 0; i < 50; ++i) {
    uint64_t step = 250'000 + 1'337 * i;
    counter += step;
    busy += step;
    acc.Update(2000 + 1000 * i, i < 30 ? two : one, {Reading(0, counter)}, {});
  }
  double jobs = static_cast<double>(acc.Usage(1)->energy_mj + acc.Usage(2)->energy_mj);
  EXPECT_NEAR(jobs, static_cast<double>(busy), 1.0);
  EXPECT_DOUBLE_EQ(acc.gpus().at(0).idle_energy_mj, 70'000.0);
  EXPECT_DOUBLE_EQ(acc.gpus().at(0).charged_energy_mj + acc.gpus().at(0).idle_energy_mj,
                   counter - 5'000'000.0);
}

TEST(AccountantTest, MigFractionsWeighTheSplitAndWholeGpusTakeAll) {
  EXPECT_DOUBLE_EQ(EnergyWeight({0, 0, 0, 1.0, true}, 3), 100.0);
  EXPECT_DOUBLE_EQ(EnergyWeight({0, kGiB, 40, 1.0, false}, 3), 40.0);
  EXPECT_DOUBLE_EQ(EnergyWeight({0, kGiB, 0, 1.0, false}, 4), 25.0);
  EXPECT_DOUBLE_EQ(EnergyWeight({0, 0, 0, 3.0 / 7, true}, 2), 300.0 / 7);
  Accountant acc({5.0, 0});
  // A 3/7 MIG instance and a 1/7 one: 3:1.
  WatchedJob big = Whole(1, 0), small = Whole(2, 0);
  big.slots[0].device_fraction = 3.0 / 7;
  small.slots[0].device_fraction = 1.0 / 7;
  acc.Update(0, {big, small}, {Reading(0, 1000)}, {});
  acc.Update(1000, {big, small}, {Reading(0, 1000 + 40'000)}, {});
  EXPECT_EQ(acc.Usage(1)->energy_mj, 30'000u);
  EXPECT_EQ(acc.Usage(2)->energy_mj, 10'000u);
}

TEST(AccountantTest, CounterThatGoesBackOrIsMissingChargesNothing) {
  Accountant acc({5.0, 0});
  std::vector<WatchedJob> jobs = {Whole(1, 0)};
  acc.Update(0, jobs, {Reading(0, 900'000)}, {});
  acc.Update(1000, jobs, {Reading(0, 100)}, {});  // driver reloaded
  acc.Update(2000, jobs, {Reading(0, 0)}, {});    // unsupported
  GpuReading failed;
  failed.gpu_index = 0;
  failed.error = "GPU is lost";
  acc.Update(3000, jobs, {failed}, {});
  EXPECT_EQ(acc.Usage(1)->energy_mj, 0u);
  acc.Update(4000, jobs, {Reading(0, 1000)}, {});
  acc.Update(5000, jobs, {Reading(0, 3000)}, {});
  EXPECT_EQ(acc.Usage(1)->energy_mj, 2000u);
}

TEST(AccountantTest, PriorUsageIsCarriedForward) {
  Accountant acc({5.0, 0});
  WatchedJob j = Whole(1, 0);
  j.prior.energy_mj = 5000;
  j.prior.gpu_mem_peak_bytes = 7 * kGiB;
  j.prior.samples = 10;
  acc.Update(0, {j}, {Reading(0, 1000, {Proc(100, kGiB)})}, {{100, 1}});
  acc.Update(1000, {j}, {Reading(0, 2000)}, {{100, 1}});
  EXPECT_EQ(acc.Usage(1)->energy_mj, 6000u);
  EXPECT_EQ(acc.Usage(1)->gpu_mem_peak_bytes, 7 * kGiB);
  EXPECT_EQ(acc.Usage(1)->samples, 12);
}

TEST(AccountantTest, UtilisationIsAJobsOwnOnlyOnWholeGpus) {
  Accountant acc({5.0, 0});
  GpuReading r = Reading(0, 0);
  r.sample.utilization_pct = 40;
  GpuReading r2 = r;
  r2.sample.utilization_pct = 60;
  acc.Update(0, {Whole(1, 0)}, {r}, {});
  acc.Update(1000, {Whole(1, 0)}, {r2}, {});
  EXPECT_EQ(acc.Usage(1)->util_pct_mean, 50);
  acc.Update(0, {Slice(2, 0, kGiB)}, {r}, {});
  EXPECT_EQ(acc.Usage(2)->util_pct_mean, -1);
}

}  // namespace
}  // namespace pinpoint::watch
