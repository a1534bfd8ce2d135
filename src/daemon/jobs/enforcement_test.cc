#include "daemon/jobs/enforcement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace pinpoint::daemon {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kGiB = uint64_t{1} << 30;

// A running 3 GiB MPS slice with a 25% SM share, 2 CPUs and 4 GiB of host memory, whose
// read-back facts agree with what it asked.
JobRecord MpsSlice() {
  JobRecord job;
  job.id = 7;
  job.state = JobState::kRunning;
  job.start_ms = 1'000;
  job.request.gpus = 1;
  job.request.gpu_mem_bytes = 3 * kGiB;
  job.request.gpu_share_pct = 25;
  job.request.cpus = 2;
  job.request.mem_bytes = 4 * kGiB;
  job.request.time_limit_s = 3600;
  Allocation a;
  a.uuid = "GPU-aaaa";
  a.gpu_mem_bytes = 3 * kGiB;
  a.gpu_share_pct = 25;
  a.mode = SharingMode::kMps;
  job.allocations = {a};
  job.readback.cpu_max = "200000 100000";
  job.readback.memory_max = std::to_string(4 * kGiB);
  job.readback.env_read = true;
  job.readback.visible_devices = "GPU-aaaa";
  job.readback.pinned_mem_limit = "0=3072M";
  job.readback.active_thread_pct = "25";
  job.readback.gpus_seen = {0};
  job.usage.samples = 5;
  job.usage.gpu_mem_peak_bytes = 2 * kGiB;
  return job;
}

const Enforcement& Entry(const std::vector<Enforcement>& list, const std::string& resource) {
  for (const Enforcement& e : list)
    if (e.resource == resource) return e;
  static const Enforcement kNone{.resource = "none"};
  ADD_FAILURE() << "no entry for " << resource;
  return kNone;
}

TEST(EnforcementTest, ASliceWhoseLimitsAgreeIsHeldResourceByResource) {
  std::vector<Enforcement> list = EnforcementOf(MpsSlice());
  ASSERT_EQ(list.size(), 6u);
  EXPECT_EQ(Entry(list, "devices").verdict, "held");
  EXPECT_EQ(Entry(list, "devices").applied, "CUDA_VISIBLE_DEVICES=GPU-aaaa");
  EXPECT_EQ(Entry(list, "gpu_mem").verdict, "held");
  EXPECT_EQ(Entry(list, "gpu_mem").applied, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=3072M");
  EXPECT_THAT(Entry(list, "gpu_mem").observed, HasSubstr("peak 2GiB"));
  EXPECT_EQ(Entry(list, "gpu_share").verdict, "not measurable");
  EXPECT_THAT(Entry(list, "gpu_share").observed, HasSubstr("not measurable under MPS"));
  EXPECT_EQ(Entry(list, "cpus").verdict, "held");
  EXPECT_EQ(Entry(list, "mem").verdict, "held");
  EXPECT_EQ(Entry(list, "time").verdict, "held");
  EXPECT_EQ(Disagreements(list), 0u);
}

TEST(EnforcementTest, WhatTheSystemAppliedIsJudgedNotCopied) {
  JobRecord job = MpsSlice();
  job.readback.pinned_mem_limit = "0=8192M";  // a limit above the 3 GiB asked
  job.readback.active_thread_pct = "";        // no SM cap at all
  job.readback.visible_devices = "GPU-aaaa,GPU-bbbb";
  job.readback.cpu_max = "400000 100000";     // 4 CPUs of time for 2 asked
  job.readback.memory_max = "max";            // no memory limit for 4 GiB asked
  std::vector<Enforcement> list = EnforcementOf(job);
  for (const char* resource : {"devices", "gpu_mem", "gpu_share", "cpus", "mem"})
    EXPECT_EQ(Entry(list, resource).verdict, "disagrees") << resource;
  EXPECT_EQ(Disagreements(list), 5u);
}

TEST(EnforcementTest, APinnedLimitIsWholeMibRoundedDown) {
  JobRecord job = MpsSlice();
  job.request.gpu_mem_bytes = 3 * kGiB + 1000;  // not a whole MiB: MPS gets 3072M
  job.allocations[0].gpu_mem_bytes = job.request.gpu_mem_bytes;
  EXPECT_EQ(Entry(EnforcementOf(job), "gpu_mem").verdict, "held");
  job.readback.pinned_mem_limit = "0=3073M";
  EXPECT_EQ(Entry(EnforcementOf(job), "gpu_mem").verdict, "disagrees");
  job.readback.pinned_mem_limit = "0=lots";
  EXPECT_EQ(Entry(EnforcementOf(job), "gpu_mem").verdict, "disagrees");
}

TEST(EnforcementTest, MemoryAboveWhatWasAskedOrAStopForItIsExceeded) {
  JobRecord job = MpsSlice();
  job.usage.gpu_mem_peak_bytes = 4 * kGiB;
  EXPECT_EQ(Entry(EnforcementOf(job), "gpu_mem").verdict, "exceeded");
  job = MpsSlice();
  job.stop_reason = Reason::kGpuMemExceeded;
  EXPECT_EQ(Entry(EnforcementOf(job), "gpu_mem").verdict, "exceeded");
}

TEST(EnforcementTest, NothingSeenOnAGpuIsSaidSoAndACgroupNotReadIsNotRead) {
  JobRecord job = MpsSlice();
  job.readback = Readback{};
  job.readback.host_unread = "this node applies no host limits";
  job.usage = JobUsage{};
  std::vector<Enforcement> list = EnforcementOf(job);
  EXPECT_EQ(Entry(list, "devices").verdict, "not seen");
  EXPECT_THAT(Entry(list, "devices").applied, HasSubstr("not read yet"));
  EXPECT_EQ(Entry(list, "gpu_mem").verdict, "not seen");
  EXPECT_EQ(Entry(list, "cpus").verdict, "not read");
  EXPECT_THAT(Entry(list, "cpus").applied, HasSubstr("no host limits"));
  EXPECT_EQ(Entry(list, "mem").verdict, "not read");
  EXPECT_EQ(Disagreements(list), 0u) << "what could not be read is no disagreement";
}

TEST(EnforcementTest, OwnCpusAreJudgedByTheCpusetTheKernelShows) {
  JobRecord job = MpsSlice();
  job.cpuset = {2, 3};
  job.readback.cpuset = "2-3";
  job.readback.cpu_max = "max 100000";
  EXPECT_EQ(Entry(EnforcementOf(job), "cpus").verdict, "held");
  job.readback.cpuset = "0-3";  // the kernel let it have more than its own
  EXPECT_EQ(Entry(EnforcementOf(job), "cpus").verdict, "disagrees");
  job.readback.cpuset = "4-5";  // as many, but not the ones chosen
  EXPECT_EQ(Entry(EnforcementOf(job), "cpus").verdict, "disagrees");
}

TEST(EnforcementTest, AJobEndedByItsTimeLimitExceededIt) {
  JobRecord job = MpsSlice();
  job.state = JobState::kFailed;
  job.reason = Reason::kTimeLimit;
  job.end_ms = job.start_ms + 3'601'000;
  std::vector<Enforcement> list = EnforcementOf(job);
  const Enforcement& time = Entry(list, "time");
  EXPECT_EQ(time.verdict, "exceeded");
  EXPECT_THAT(time.observed, HasSubstr("ran"));
}

TEST(EnforcementTest, EndedJobsShowTheirHostUsage) {
  JobRecord job = MpsSlice();
  job.state = JobState::kCompleted;
  job.end_ms = job.start_ms + 10'000;
  job.readback.cpu_usec = 2'500'000;
  job.readback.mem_peak_bytes = static_cast<int64_t>(4 * kGiB);
  std::vector<Enforcement> list = EnforcementOf(job);
  EXPECT_EQ(Entry(list, "cpus").observed, "2.5 s of CPU time");
  EXPECT_EQ(Entry(list, "mem").observed, "peak 4GiB, at its limit");
  EXPECT_EQ(Entry(list, "mem").verdict, "held") << "the kernel held it at its limit";
}

TEST(EnforcementTest, ACpuJobHasNoGpuEntriesAndAPendingJobOrALeaseNoList) {
  JobRecord job = MpsSlice();
  job.request.gpus = 0;
  job.request.gpu_mem_bytes = 0;
  job.request.gpu_share_pct = 0;
  job.allocations.clear();
  std::vector<Enforcement> list = EnforcementOf(job);
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].resource, "cpus");
  JobRecord pending = MpsSlice();
  pending.state = JobState::kPending;
  pending.start_ms = 0;
  EXPECT_TRUE(EnforcementOf(pending).empty());
  JobRecord lease = MpsSlice();
  lease.kind = JobKind::kLease;
  EXPECT_TRUE(EnforcementOf(lease).empty());
}

TEST(EnforcementTest, AWholeGpuOutsideMpsHasNoLimitToReadAndGetsNoShareEntry) {
  JobRecord job = MpsSlice();
  job.request.gpu_mem_bytes = 0;
  job.request.gpu_share_pct = 0;
  job.allocations[0].mode = SharingMode::kExclusive;
  job.allocations[0].gpu_mem_bytes = 0;
  job.readback.pinned_mem_limit = "";
  job.readback.active_thread_pct = "";
  std::vector<Enforcement> list = EnforcementOf(job);
  EXPECT_EQ(list.size(), 5u);
  EXPECT_EQ(Entry(list, "gpu_mem").applied, "whole device");
  EXPECT_EQ(Entry(list, "gpu_mem").verdict, "held");
}

TEST(EnforcementTest, ReadBackValuesAreBounded) {
  EXPECT_EQ(Bounded(std::string(10'000, 'x')).size(), kMaxReadbackBytes);
  EXPECT_EQ(Bounded("GPU-1"), "GPU-1");
}

}  // namespace
}  // namespace pinpoint::daemon
