#include "daemon/jobs/enforcement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sharing/backend.h"

namespace pinpoint::daemon {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kGiB = uint64_t{1} << 30;

// The limits a slice's hold applies through variables, as a backend that sets them says
// (sharing::Backend::Applies; MPS's are its pinned memory limit and its active thread percentage):
// the proof knows no mode, so these are named as a mode would name them.
std::vector<AppliedLimit> SliceLimits() {
  return {
      AppliedLimit{.resource = "devices",
                   .variable = "CUDA_VISIBLE_DEVICES",
                   .expected = "GPU-aaaa",
                   .strength = LimitStrength::kDriver,
                   .what = "the devices the CUDA driver shows it",
                   .given = "GPU-aaaa"},
      AppliedLimit{.resource = "gpu_mem",
                   .variable = "SLICE_MEM_LIMIT",
                   .expected = "0=3072M",
                   .strength = LimitStrength::kDriver,
                   .what = "a pinned memory limit",
                   .given = "0=3072M"},
      AppliedLimit{.resource = "gpu_share",
                   .variable = "SLICE_SM_PCT",
                   .expected = "25",
                   .strength = LimitStrength::kDriver,
                   .what = "an SM percentage",
                   .unobservable = "not measurable under MPS: NVML reports no SM use per client",
                   .given = "25"}};
}

// A running 3 GiB slice with a 25% SM share, 2 CPUs and 4 GiB of host memory, whose read-back
// facts agree with what it asked: its first process and its one GPU process ran as given.
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
  job.readback.limits = SliceLimits();
  job.readback.env_read = true;
  job.readback.env = {
      {"CUDA_VISIBLE_DEVICES", "GPU-aaaa"}, {"SLICE_MEM_LIMIT", "0=3072M"}, {"SLICE_SM_PCT", "25"}};
  job.readback.gpu_env_reads = 1;
  job.readback.gpu_env = {{"CUDA_VISIBLE_DEVICES", {"GPU-aaaa"}},
                          {"SLICE_MEM_LIMIT", {"0=3072M"}},
                          {"SLICE_SM_PCT", {"25"}}};
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
  EXPECT_EQ(Entry(list, "gpu_mem").applied, "SLICE_MEM_LIMIT=0=3072M");
  EXPECT_THAT(Entry(list, "gpu_mem").observed, HasSubstr("peak 2GiB"));
  EXPECT_EQ(Entry(list, "gpu_share").verdict, "not measurable");
  EXPECT_THAT(Entry(list, "gpu_share").observed, HasSubstr("not measurable under MPS"));
  EXPECT_EQ(Entry(list, "cpus").verdict, "held");
  EXPECT_EQ(Entry(list, "mem").verdict, "held");
  EXPECT_EQ(Entry(list, "time").verdict, "held");
  EXPECT_EQ(Disagreements(list), 0u);
}

// What pinpoint gave the job's environment at its start is not what its hold applies: pinpoint's
// own failure, the node's alarm. So are host limits the kernel shows other than asked.
TEST(EnforcementTest, WhatPinpointGaveIsJudgedNotCopied) {
  JobRecord job = MpsSlice();
  job.readback.limits[0].given = "GPU-aaaa,GPU-bbbb";
  job.readback.limits[1].given = "0=8192M";  // a limit above the 3 GiB asked
  job.readback.limits[2].given = "";         // no SM cap at all
  job.readback.cpu_max = "400000 100000";    // 4 CPUs of time for 2 asked
  job.readback.memory_max = "max";           // no memory limit for 4 GiB asked
  std::vector<Enforcement> list = EnforcementOf(job);
  for (const char* resource : {"devices", "gpu_mem", "gpu_share", "cpus", "mem"})
    EXPECT_EQ(Entry(list, resource).verdict, "disagrees") << resource;
  EXPECT_EQ(Disagreements(list), 5u);
  EXPECT_THAT(Entry(list, "gpu_mem").applied, HasSubstr("SLICE_MEM_LIMIT=0=8192M given"));
}

// Attack (issue 57): a GPU process of the job ran with a limit it set for itself after its first
// 2 s (a child's CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=81559M), while its first process ran as given.
// It was recorded "held, applied 0=1024M", from the first process alone. It is "overridden": the
// job's own doing, said so with the value it ran with, and no disagreement of pinpoint's.
TEST(EnforcementTest, AGpuProcessThatRaisedItsOwnLimitIsOverriddenNotHeld) {
  JobRecord job = MpsSlice();
  job.readback.gpu_env_reads = 2;
  job.readback.gpu_env["SLICE_MEM_LIMIT"] = {"0=3072M", "0=81559M"};
  std::vector<Enforcement> list = EnforcementOf(job);
  EXPECT_EQ(Entry(list, "gpu_mem").verdict, "overridden");
  EXPECT_THAT(Entry(list, "gpu_mem").applied,
              HasSubstr("a process of the job ran with SLICE_MEM_LIMIT=0=81559M"));
  EXPECT_THAT(Entry(list, "gpu_mem").applied, HasSubstr("pinpointd's watcher is its bound"));
  EXPECT_EQ(Disagreements(list), 0u) << "a user's own doing is no alarm of the node's";
  EXPECT_EQ(Overrides(list), 1u) << "counted apart";
  job.readback.gpu_env["SLICE_MEM_LIMIT"] = {""};  // one under `env -i`: no limit at all
  EXPECT_EQ(Entry(EnforcementOf(job), "gpu_mem").verdict, "overridden");
  job.usage.gpu_mem_peak_bytes = 6 * kGiB;  // and it went past its size: the watcher stopped it
  job.stop_reason = Reason::kGpuMemExceeded;
  EXPECT_EQ(Entry(EnforcementOf(job), "gpu_mem").verdict, "exceeded");
}

// Attack (issue 57): a job whose first process was a 2 s decoy running with another value, and
// whose GPU process ran with exactly what it was given, was recorded "disagrees" and counted in
// the admins' alarm. The GPU processes decide: held.
TEST(EnforcementTest, WhatItsGpuProcessesRanWithDecidesNotADecoyBeforeThem) {
  JobRecord job = MpsSlice();
  job.readback.env["SLICE_MEM_LIMIT"] = "0=99999M";  // the decoy, read first
  std::vector<Enforcement> list = EnforcementOf(job);
  EXPECT_EQ(Entry(list, "gpu_mem").verdict, "held");
  EXPECT_EQ(Disagreements(list), 0u);
  // With no GPU process read, the first process's value is all there is: overridden, still no
  // disagreement (pinpoint gave what it should).
  job.readback.gpu_env_reads = 0;
  job.readback.gpu_env.clear();
  list = EnforcementOf(job);
  EXPECT_EQ(Entry(list, "gpu_mem").verdict, "overridden");
  EXPECT_EQ(Disagreements(list), 0u);
}

// Attack (issue 57): a --gpu-mem slice on an exclusive GPU, or a --mig job on an instance, was
// told "pinpointd's watcher stops it above its size", but the watcher gives such a hold no budget;
// the device's (or the instance's) own memory, which does apply, was not shown.
TEST(EnforcementTest, ASliceHeldWholeIsBoundByItsDevicesOwnMemory) {
  JobRecord job = MpsSlice();
  job.allocations[0].mode = SharingMode::kExclusive;
  sharing::Slice slice{
      .gpu_mem_bytes = 3 * kGiB, .device_mem_bytes = 10 * kGiB, .mig_instance = true};
  job.readback.limits = {SliceLimits()[0], sharing::DeviceMemory(slice), sharing::DeviceSms(slice)};
  job.usage.gpu_mem_peak_bytes = 8 * kGiB;  // above what it asked, within its instance
  std::vector<Enforcement> list = EnforcementOf(job);
  EXPECT_EQ(Entry(list, "gpu_mem").applied, "its MIG instance's own memory, 10GiB");
  EXPECT_THAT(Entry(list, "gpu_mem").applied, ::testing::Not(HasSubstr("watcher")));
  EXPECT_EQ(Entry(list, "gpu_mem").verdict, "held") << "no budget of the watcher's to exceed";
  EXPECT_EQ(Entry(list, "gpu_share").applied, "every SM of its MIG instance");
  EXPECT_EQ(Entry(list, "gpu_share").verdict, "held");
  // A slice the watcher alone bounds (a time-sliced GPU) says so, and is exceeded past its size.
  job.readback.limits = {SliceLimits()[0], sharing::WatcherMemory(slice), sharing::NoSmCap()};
  list = EnforcementOf(job);
  EXPECT_THAT(Entry(list, "gpu_mem").applied, HasSubstr("pinpointd's watcher stops it above 3GiB"));
  EXPECT_EQ(Entry(list, "gpu_mem").verdict, "exceeded");
  EXPECT_EQ(Entry(list, "gpu_share").verdict, "disagrees") << "25% asked, no cap applied";
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
  job.readback.limits = SliceLimits();
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

// A job without CPUs of its own: judged by its quota; its cgroup's cpuset (every CPU, or all but
// the site's system_cpus) says where it may run, not how much.
TEST(EnforcementTest, ASharingJobIsJudgedByItsQuotaWhateverItsCpuset) {
  JobRecord job = MpsSlice();
  job.request.cpus = 2;
  job.readback.cpuset = "1-15";
  job.readback.cpu_max = "200000 100000";
  Enforcement cpus = Entry(EnforcementOf(job), "cpus");
  EXPECT_EQ(cpus.verdict, "held");
  EXPECT_EQ(cpus.applied, "cpu.max 200000 100000 on cpuset 1-15");
  job.readback.cpu_max = "max 100000";
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

// Its run time is what its limit counts: the time it spent suspended is said apart.
TEST(EnforcementTest, TheTimeSuspendedIsNotRunTime) {
  JobRecord job = MpsSlice();
  job.request.time_limit_s = 3600;
  job.suspend.phase = SuspendPhase::kSuspended;
  EXPECT_EQ(Entry(EnforcementOf(job), "time").observed, "suspended");
  job.suspend = {};
  job.suspended_ms = 600'000;
  job.state = JobState::kCompleted;
  job.end_ms = job.start_ms + 1'800'000;
  const Enforcement time = Entry(EnforcementOf(job), "time");
  EXPECT_EQ(time.observed, "ran 20:00, and 10:00 suspended");
  EXPECT_EQ(time.verdict, "held");
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

TEST(EnforcementTest, AWholeGpuHasNoLimitToReadAndGetsNoShareEntry) {
  JobRecord job = MpsSlice();
  job.request.gpu_mem_bytes = 0;
  job.request.gpu_share_pct = 0;
  job.allocations[0].mode = SharingMode::kExclusive;
  job.allocations[0].gpu_mem_bytes = 0;
  sharing::Slice slice{.device_mem_bytes = 80 * kGiB};
  job.readback.limits = {SliceLimits()[0], sharing::DeviceMemory(slice), sharing::DeviceSms(slice)};
  std::vector<Enforcement> list = EnforcementOf(job);
  EXPECT_EQ(list.size(), 5u);
  EXPECT_EQ(Entry(list, "gpu_mem").applied, "the whole device's memory, 80GiB");
  EXPECT_EQ(Entry(list, "gpu_mem").verdict, "held");
}

// A job started by a release that kept no limits says so rather than guess.
TEST(EnforcementTest, LimitsNotRecordedAreNotRead) {
  JobRecord job = MpsSlice();
  job.readback.limits.clear();
  std::vector<Enforcement> list = EnforcementOf(job);
  EXPECT_EQ(Entry(list, "gpu_mem").verdict, "not read");
  EXPECT_EQ(Entry(list, "devices").verdict, "not read");
  EXPECT_EQ(Disagreements(list), 0u);
}

TEST(EnforcementTest, ReadBackValuesAreBounded) {
  EXPECT_EQ(Bounded(std::string(10'000, 'x')).size(), kMaxReadbackBytes);
  EXPECT_EQ(Bounded("GPU-1"), "GPU-1");
}

}  // namespace
}  // namespace pinpoint::daemon
