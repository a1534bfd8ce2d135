// `pinpoint update` on the daemon (Node::UpdateJobs, the "update" op): a changed job keeps its id
// and place, passes a submit's rules, and the bytes its user holds follow its request.
#include <gtest/gtest.h>

#include "daemon/service/service_fixture.h"
#include "pinpoint/api_codec.h"

namespace pinpoint::daemon {
namespace {

using nlohmann::json;

class UpdateTest : public ServiceFixture {
 protected:
  void SetUp() override { Restart(Options()); }
  NodeOptions Options() {
    NodeOptions o;
    o.inventory = TwoGpus();
    o.admission.max_time_limit_s = 86400;
    return o;
  }
  JobId Submit(const api::Caller& caller, JobRequest r, bool hold = false) {
    auto job = node_->Submit(caller, std::move(r), std::nullopt, hold);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->id : 0;
  }
  JobRequest Whole(int gpus) {
    JobRequest r = GpuSlice();
    r.gpus = gpus;
    r.gpu_mem_bytes = 0;
    return r;
  }
  JobRecord Get(JobId id) { return node_->Get(id).value(); }
  Status Update(const api::Caller& caller, JobId id, const JobEdit& edit) {
    return node_->UpdateJobs(caller, {id}, edit).front();
  }
  api::Caller Root() { return api::Caller{}; }
};

JobEdit Mem(uint64_t bytes) {
  JobEdit e;
  e.gpu_mem_bytes = bytes;
  return e;
}

TEST_F(UpdateTest, APendingJobChangesInPlaceAndStartsAsChanged) {
  JobId big = Submit(caller_, Whole(2));
  node_->Step();
  ASSERT_EQ(Get(big).state, JobState::kRunning);
  JobId first = Submit(caller_, GpuSlice());
  JobId second = Submit(caller_, GpuSlice());
  int64_t submitted = Get(first).submit_ms;
  JobEdit e = Mem(8ull << 30);
  e.name = "renamed";
  e.time_limit_s = 7200;
  ASSERT_TRUE(Update(caller_, first, e).ok());

  Restart(Options());  // what was stored
  JobRecord changed = Get(first);
  EXPECT_EQ(changed.request.gpu_mem_bytes, 8ull << 30);
  EXPECT_EQ(changed.request.name, "renamed");
  EXPECT_EQ(changed.request.time_limit_s, 7200);
  EXPECT_EQ(changed.submit_ms, submitted) << "its place: the same id and submit time";
  auto events = node_->Events(first);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ(events->back().kind, "update");
  EXPECT_EQ(events->back().detail,
            "by uid 4242: time limit 2:00:00, gpu-mem 8GiB, name \"renamed\"");

  ASSERT_TRUE(node_->Cancel(caller_, {big}).front().ok());
  node_->Step();
  node_->Step();
  ASSERT_EQ(Get(first).state, JobState::kRunning);
  EXPECT_EQ(Get(first).allocations.at(0).gpu_mem_bytes, 8ull << 30) << "placed as changed";
  EXPECT_EQ(Get(second).state, JobState::kRunning);
  EXPECT_LT(launcher_.launches().at(1).job_id, launcher_.launches().at(2).job_id)
      << "still ahead of the later job";
}

TEST_F(UpdateTest, AChangedJobPassesASubmitsRulesOrStaysAsItWas) {
  JobId id = Submit(caller_, GpuSlice(), /*hold=*/true);
  JobId whole = Submit(caller_, Whole(1), true);
  auto refused = [&](JobId job, const JobEdit& e, Code code, const std::string& message) {
    Status s = Update(caller_, job, e);
    EXPECT_EQ(s.code(), code) << s.ToString();
    EXPECT_EQ(s.message(), message);
  };
  JobEdit time;
  time.time_limit_s = 2 * 86400;
  refused(id, time, Code::kFailedPrecondition,
          "time limit 2-00:00:00 is above 1-00:00:00, the most this node allows (max_time_limit)");
  refused(id, Mem(900ull << 30), Code::kFailedPrecondition,
          "needs 900GiB of device memory on one device, largest has 80GiB");
  JobEdit share;
  share.gpu_share_pct = 20;
  refused(whole, share, Code::kInvalidArgument,
          "a gpu share needs a slice: give --gpu-mem too (whole GPUs have no share)");
  JobEdit priority;
  priority.priority = 10;
  EXPECT_EQ(Update(caller_, id, priority).code(), Code::kPermissionDenied)
      << "above max_user_priority";
  JobEdit name;
  name.name = "bad\x1b[2Jname";
  EXPECT_EQ(Update(caller_, id, name).code(), Code::kInvalidArgument);
  api::Caller stranger;
  stranger.uid = 5555;
  EXPECT_EQ(Update(stranger, id, Mem(2ull << 30)).code(), Code::kPermissionDenied);
  JobRecord now = Get(id);
  EXPECT_EQ(now.request.gpu_mem_bytes, 1ull << 30) << "every refusal left it as it was";
  EXPECT_EQ(now.request.time_limit_s, 86400);
  EXPECT_EQ(now.request.priority, 0);
  EXPECT_EQ(now.request.name, "");
  EXPECT_EQ(node_->Events(id)->size(), 1u) << "its submit: no update recorded";
  EXPECT_TRUE(Update(Root(), id, priority).ok()) << "root may ask any priority";
  EXPECT_EQ(Get(id).request.priority, 10);
}

// A pending job's service class changes as a submit's --qos would be judged: a class the node
// has not, or one whose users do not name the caller, is refused; root may name any; a running
// job keeps its class (its preemption and MPS client priority were set at its start).
TEST_F(UpdateTest, AServiceClassChangesWhileItWaitsWithTheCallersRights) {
  NodeOptions o = Options();
  o.admission.qos = DefaultServiceClasses();
  o.admission.qos.push_back(ServiceClass{.name = "urgent", .users = {"nobody-here"}});
  Restart(o);
  JobId id = Submit(caller_, GpuSlice(), /*hold=*/true);
  JobEdit scavenger;
  scavenger.qos = "scavenger";
  ASSERT_TRUE(Update(caller_, id, scavenger).ok());
  EXPECT_EQ(Get(id).request.qos, "scavenger");
  JobEdit gold;
  gold.qos = "gold";
  EXPECT_EQ(Update(caller_, id, gold).code(), Code::kInvalidArgument) << "no such class";
  JobEdit urgent;
  urgent.qos = "urgent";
  if (!caller_.IsRoot()) {
    Status s = Update(caller_, id, urgent);
    EXPECT_EQ(s.code(), Code::kPermissionDenied) << s.ToString();
    EXPECT_EQ(Get(id).request.qos, "scavenger") << "left as it was";
  }
  EXPECT_TRUE(Update(Root(), id, urgent).ok()) << "root may name any class";
  EXPECT_EQ(Get(id).request.qos, "urgent");
  JobId running = Submit(caller_, GpuSlice());
  node_->Step();
  ASSERT_EQ(Get(running).state, JobState::kRunning);
  EXPECT_EQ(Update(Root(), running, scavenger).code(), Code::kFailedPrecondition);
  EXPECT_EQ(Get(running).request.qos, "normal");
}

TEST_F(UpdateTest, GpusCpusAndHostMemoryChangeWithinWhatTheNodeHas) {
  JobId id = Submit(caller_, Whole(1), /*hold=*/true);
  JobEdit more;
  more.gpus = 2;
  more.cpus = 8;
  more.mem_bytes = 16ull << 30;
  ASSERT_TRUE(Update(caller_, id, more).ok());
  Restart(Options());  // what was stored
  JobRecord changed = Get(id);
  EXPECT_EQ(changed.request.gpus, 2);
  EXPECT_EQ(changed.request.cpus, 8);
  EXPECT_EQ(changed.request.mem_bytes, 16ull << 30);
  EXPECT_EQ(node_->Events(id)->back().detail.find("gpus 2, cpus 8, mem 16GiB") != std::string::npos,
            true)
      << node_->Events(id)->back().detail;

  for (auto [field, value] :
       {std::pair<const char*, uint64_t>{"gpus", 3}, {"cpus", 65}, {"mem", 257ull << 30}}) {
    JobEdit too_much;
    if (std::string(field) == "gpus") too_much.gpus = static_cast<int>(value);
    if (std::string(field) == "cpus") too_much.cpus = static_cast<int>(value);
    if (std::string(field) == "mem") too_much.mem_bytes = value;
    Status s = Update(caller_, id, too_much);
    EXPECT_EQ(s.code(), Code::kFailedPrecondition) << field << ": " << s.ToString();
  }
  JobRecord same = Get(id);
  EXPECT_EQ(same.request.gpus, 2) << "each refusal left it as it was";
  EXPECT_EQ(same.request.cpus, 8);
  EXPECT_EQ(same.request.mem_bytes, 16ull << 30);

  ASSERT_TRUE(node_->ReleaseJobs(caller_, {id}).front().ok());
  node_->Step();
  EXPECT_EQ(Get(id).state, JobState::kRunning);
  EXPECT_EQ(Get(id).allocations.size(), 2u) << "it starts as changed: two whole GPUs";
  JobEdit fewer;
  fewer.cpus = 1;
  EXPECT_EQ(Update(caller_, id, fewer).code(), Code::kFailedPrecondition) << "fixed once it runs";
}

TEST_F(UpdateTest, TheBytesAUserHoldsFollowTheRequest) {
  NodeOptions o = Options();
  o.admission.max_user_request_bytes = 1000;
  Restart(o);
  JobId id = Submit(caller_, GpuSlice(), true);  // about 15 bytes
  JobEdit longer;
  longer.name = std::string(kMaxNameBytes, 'a');
  ASSERT_TRUE(Update(caller_, id, longer).ok());
  JobRequest big = GpuSlice();
  big.env["DATA"] = std::string(740, 'x');
  Status full = node_->Submit(caller_, big).status();
  EXPECT_EQ(full.code(), Code::kUnavailable) << "the long name counts against the user's bytes";
  JobEdit shorter;
  shorter.name = "s";
  ASSERT_TRUE(Update(caller_, id, shorter).ok());
  JobId second = Submit(caller_, big);
  EXPECT_NE(second, 0) << "and the short one gives them back";
  EXPECT_EQ(Update(caller_, id, longer).code(), Code::kUnavailable)
      << "no room now for the long name";
  EXPECT_EQ(Get(id).request.name, "s");
}

TEST_F(UpdateTest, ARunningJobsTimeLimitIsLoweredByItsOwnerAndEnforced) {
  JobRequest r = GpuSlice();
  r.time_limit_s = 3600;
  JobId id = Submit(caller_, r);
  node_->Step();
  ASSERT_EQ(Get(id).state, JobState::kRunning);
  JobEdit e;
  e.time_limit_s = 60;
  ASSERT_TRUE(Update(caller_, id, e).ok());
  clock_.AdvanceMs(61 * 1000);
  node_->Step();
  EXPECT_TRUE(Get(id).cancel_requested || IsFinal(Get(id).state)) << "stopped at the new limit";
  EXPECT_EQ(Get(id).stop_reason, Reason::kTimeLimit);
}

TEST_F(UpdateTest, AnArraysIdChangesItsPendingTasksAndAnswersARefusalOnce) {
  auto submitted = node_->SubmitArray(caller_, Whole(1), ArraySpec{{1, 2, 3, 4}, 0});
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  JobId array = submitted->first.id;
  node_->Step();  // two tasks run, two wait
  json reply =
      service_->Handle(caller_, json{{"op", "update"}, {"arrays", {array}}, {"name", "t"}}, 1)
          .value();
  ASSERT_TRUE(reply["ok"].get<bool>()) << reply.dump();
  EXPECT_EQ(reply["results"][0]["array_tasks"], 2) << "the pending ones";
  EXPECT_EQ(Get(array).request.name, "") << "a running task keeps its name";
  EXPECT_EQ(Get(array + 3).request.name, "t");
  json refused =
      service_
          ->Handle(caller_,
                   json{{"op", "update"}, {"arrays", {array}}, {"gpu_mem_bytes", 900ull << 30}}, 1)
          .value();
  ASSERT_TRUE(refused["ok"].get<bool>()) << refused.dump();
  EXPECT_FALSE(refused["results"][0]["ok"].get<bool>());
  EXPECT_EQ(refused["results"][0]["error"]["message"],
            "needs 900GiB of device memory on one device, largest has 80GiB");
  EXPECT_EQ(service_->waiting().array_requests, 0u) << "answered, not retried";
}

}  // namespace
}  // namespace pinpoint::daemon
