// Leases hold no more than a job would (docs/containers.md "Time limits and shares"): placed by the
// pass's rules for the empty GPUs (keep_empty_gpus, the users' fair shares), and ended at their
// time limit (the node's default_time_limit and max_time_limit, as a job's).
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "daemon/service/service_fixture.h"

namespace pinpoint::daemon {
namespace {

constexpr int64_t kHourS = 3600;

// Eight MPS GPUs of 80 GiB: `TwoGpus` four times over.
sched::Inventory EightGpus() {
  sched::Inventory inv = TwoGpus();
  for (int i = 2; i < 8; ++i) {
    sched::Device d = inv.devices[0];
    d.index = i;
    d.gpu_index = i;
    d.uuid = "GPU-" + std::to_string(i);
    inv.devices.push_back(d);
  }
  inv.keep_empty_gpus = 1;  // keep_empty_gpus "auto" on eight GPUs
  return inv;
}

api::Caller User(uint32_t uid) {
  api::Caller c;
  c.uid = uid;
  c.gid = uid;
  return c;
}

class LeaseLimitsTest : public ServiceFixture {
 protected:
  void SetUp() override {
    NodeOptions o;
    o.inventory = EightGpus();
    o.launch.lease_attach_timeout_ms = 60000;
    o.admission.default_time_limit_s = kHourS;
    o.admission.max_time_limit_s = 4 * kHourS;
    Restart(o);
    root_ = User(0);
  }
  // A 1 GiB lease of caller_ (user A), attached to a container of A's processes of its own.
  Result<JobId> OpenAttached(int64_t limit_s = 0) {
    LeaseRequest r;
    r.gpus = 1;
    r.gpu_mem_bytes = 1ull << 30;
    r.time_limit_s = limit_s;
    auto opened = node_->OpenLease(caller_, r);
    if (!opened.ok()) return opened.status();
    JobId id = opened->lease.id;
    int64_t pid = 1000 + id;
    containers_.SetCgroup(pid, Cgroup(id));
    containers_.SetProcesses(Cgroup(id), std::vector<int64_t>{pid});
    containers_.SetUids(pid, caller_.uid);
    auto attached = node_->AttachLease(root_, id, pid, caller_.uid);
    if (!attached.ok()) return attached.status();
    return id;
  }
  static std::string Cgroup(JobId id) { return "0::/machine/libpod-" + std::to_string(id); }
  // The GPUs A's eight leases hold, as the attack of issue 55 left them.
  std::vector<JobId> OpenEight() {
    std::vector<JobId> ids;
    for (int i = 0; i < 8; ++i) {
      auto id = OpenAttached();
      EXPECT_TRUE(id.ok()) << id.status().ToString();
      if (id.ok()) ids.push_back(*id);
    }
    return ids;
  }
  JobRecord Record(JobId id) { return node_->Get(id).value(); }
  // User B's 1 GiB slice and user C's whole GPU, submitted, each for 2 hours.
  std::pair<JobId, JobId> SubmitOthers() {
    JobRequest slice = GpuSlice();
    slice.time_limit_s = 2 * kHourS;
    JobRequest whole = slice;
    whole.gpu_mem_bytes = 0;
    return {node_->Submit(User(5001), slice).value().id,
            node_->Submit(User(5002), whole).value().id};
  }
  api::Caller root_;
};

// Attack (issue 55, 7): one user's eight 1 GiB leases, opened while another user's slice and a
// whole-GPU job wait for the next pass, took the empty GPUs both needed (a lease skipped the
// pass's rules). Placed as a pass places slices, they leave one empty GPU to each.
TEST_F(LeaseLimitsTest, OneUsersLeasesTakeNoEmptyGpuThatWaitingJobsNeed) {
  auto [slice, gpu] = SubmitOthers();
  std::vector<JobId> leases = OpenEight();
  ASSERT_EQ(leases.size(), 8u) << "they pack onto A's GPUs rather than being refused";
  node_->Step();
  EXPECT_EQ(Record(slice).state, JobState::kRunning) << Record(slice).detail;
  EXPECT_EQ(Record(gpu).state, JobState::kRunning) << Record(gpu).detail;
  for (JobId id : leases) EXPECT_EQ(Record(id).state, JobState::kRunning);
}

// A user at their fair share whose own GPUs are full does not take the empty GPU another user's
// slice waits for: the lease is refused and says why, in one line.
TEST_F(LeaseLimitsTest, ALeaseTakesNoEmptyGpuAnotherUserBelowTheirShareWaitsFor) {
  NodeOptions o = node_->options();
  o.inventory = TwoGpus();
  Restart(o);
  LeaseRequest big;
  big.gpus = 1;
  big.gpu_mem_bytes = 70ull << 30;
  auto first = node_->OpenLease(caller_, big);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  JobRecord waiting = node_->Submit(User(5001), GpuSlice()).value();
  auto second = node_->OpenLease(caller_, big);
  ASSERT_FALSE(second.ok()) << "took GPU " << second->lease.allocations.at(0).device_index;
  EXPECT_EQ(second.status().code(), Code::kUnavailable);
  EXPECT_NE(second.status().message().find("kept for other users' waiting slices"),
            std::string::npos)
      << second.status().message();
  EXPECT_EQ(second.status().message().find('\n'), std::string::npos);
  node_->Step();
  EXPECT_EQ(Record(waiting.id).state, JobState::kRunning) << Record(waiting.id).detail;
}

// Attack (issue 55, 7): the eight leases held the node for ever. Now each ends at the node's
// default time limit, its container stopped as a close stops it (SIGTERM to its cgroup), failed
// with reason time-limit; the GPUs go to the jobs that waited.
TEST_F(LeaseLimitsTest, LeasesPastTheirTimeLimitEndAndFreeTheirGpus) {
  std::vector<JobId> leases = OpenEight();
  ASSERT_EQ(leases.size(), 8u);
  for (JobId id : leases) EXPECT_EQ(Record(id).request.time_limit_s, kHourS) << "the default";
  auto [slice, gpu] = SubmitOthers();
  node_->Step();
  ASSERT_EQ(Record(gpu).state, JobState::kPending) << "no GPU is empty while the leases hold";
  clock_.AdvanceMs(kHourS * 1000 - 1);
  node_->Step();
  EXPECT_TRUE(containers_.signals.empty()) << "not before its limit";
  clock_.AdvanceMs(1);
  node_->Step();
  for (JobId id : leases) {
    EXPECT_TRUE(Record(id).cancel_requested);
    EXPECT_NE(std::find(containers_.signals.begin(), containers_.signals.end(),
                        std::make_pair(Cgroup(id), SIGTERM)),
              containers_.signals.end())
        << "lease " << id;
    containers_.SetProcesses(Cgroup(id), std::vector<int64_t>{});  // the container exits
  }
  node_->Step();
  for (JobId id : leases) {
    JobRecord lease = Record(id);
    EXPECT_EQ(lease.state, JobState::kFailed);
    EXPECT_EQ(lease.reason, Reason::kTimeLimit);
    EXPECT_EQ(lease.detail, "ran past its time limit of 1:00:00 (its container was stopped)");
  }
  EXPECT_EQ(lease_specs_.removed.size(), 8u) << "their CDI specs are removed";
  EXPECT_EQ(Record(slice).state, JobState::kRunning) << Record(slice).detail;
  EXPECT_EQ(Record(gpu).state, JobState::kRunning) << Record(gpu).detail;
}

// A lease no container holds yet ends at its time limit too, at once.
TEST_F(LeaseLimitsTest, AnUnattachedLeaseEndsAtItsTimeLimit) {
  NodeOptions o = node_->options();
  o.inventory = EightGpus();
  o.launch.lease_attach_timeout_ms = 86400000;
  Restart(o);
  LeaseRequest r;
  r.gpus = 1;
  r.gpu_mem_bytes = 1ull << 30;
  r.time_limit_s = 60;
  JobId id = node_->OpenLease(caller_, r).value().lease.id;
  clock_.AdvanceMs(60000);
  node_->Step();
  node_->Step();
  EXPECT_EQ(Record(id).reason, Reason::kTimeLimit);
  EXPECT_EQ(Record(id).detail, "ran past its time limit of 1:00 (no container was attached)");
}

// A lease asking for more than max_time_limit is refused with one line, root's too, and nothing
// of it is stored; one within it keeps what it asked.
TEST_F(LeaseLimitsTest, ALeaseAboveTheMaximumIsRefusedWithOneLine) {
  for (const api::Caller& who : {caller_, root_}) {
    LeaseRequest r;
    r.gpus = 1;
    r.gpu_mem_bytes = 1ull << 30;
    r.time_limit_s = 5 * kHourS;
    auto refused = node_->OpenLease(who, r);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), Code::kFailedPrecondition);
    EXPECT_EQ(refused.status().message(),
              "time limit 5:00:00 is above 4:00:00, the most this node allows (max_time_limit)");
  }
  EXPECT_EQ(node_->List(true, std::nullopt, 0, 100)->total, 0);
  auto within = OpenAttached(2 * kHourS);
  ASSERT_TRUE(within.ok()) << within.status().ToString();
  EXPECT_EQ(Record(*within).request.time_limit_s, 2 * kHourS);
}

// Renewal is an update of the time limit, by a running job's rules: the owner may lower it, only
// root may raise it, never past max_time_limit; nothing else of a lease changes.
TEST_F(LeaseLimitsTest, ALeasesTimeLimitIsUpdatedAsARunningJobs) {
  JobId id = OpenAttached().value();
  JobEdit longer;
  longer.time_limit_s = 2 * kHourS;
  Status by_user = node_->UpdateJobs(caller_, {id}, longer).front();
  EXPECT_EQ(by_user.code(), Code::kPermissionDenied) << by_user.ToString();
  EXPECT_NE(by_user.message().find("only root may raise its time limit"), std::string::npos);
  JobEdit shorter;
  shorter.time_limit_s = 30 * 60;
  EXPECT_TRUE(node_->UpdateJobs(caller_, {id}, shorter).front().ok());
  EXPECT_EQ(Record(id).request.time_limit_s, 30 * 60);
  EXPECT_TRUE(node_->UpdateJobs(root_, {id}, longer).front().ok());
  EXPECT_EQ(Record(id).request.time_limit_s, 2 * kHourS);
  JobEdit past_max;
  past_max.time_limit_s = 5 * kHourS;
  EXPECT_EQ(node_->UpdateJobs(root_, {id}, past_max).front().code(), Code::kFailedPrecondition);
  JobEdit name;
  name.name = "other";
  Status renamed = node_->UpdateJobs(root_, {id}, name).front();
  EXPECT_EQ(renamed.code(), Code::kFailedPrecondition);
  EXPECT_NE(renamed.message().find("only its time limit can change"), std::string::npos);
  // The new limit is the one enforced: 2 h from its opening.
  clock_.AdvanceMs(2 * kHourS * 1000);
  node_->Step();
  EXPECT_TRUE(Record(id).cancel_requested);
  EXPECT_EQ(Record(id).stop_reason, Reason::kTimeLimit);
}

}  // namespace
}  // namespace pinpoint::daemon
