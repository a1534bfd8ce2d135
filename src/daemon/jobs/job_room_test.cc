// max_jobs and max_jobs_per_user: what one user can make pinpointd hold. A user who floods the
// node with submits and arrays is refused with one line once at the limit, nothing of the refused
// request is stored, other users and root keep submitting, and room comes back as jobs end.
#include <gtest/gtest.h>

#include "daemon/service/service_fixture.h"
#include "daemon/setup/config.h"
#include "pinpoint/array_spec.h"

namespace pinpoint::daemon {
namespace {

class JobRoomTest : public ServiceFixture {
 protected:
  void SetUp() override { Limits(/*node=*/10, /*user=*/4); }
  void Limits(size_t node, size_t user) {
    NodeOptions o;
    o.inventory = TwoGpus();
    o.admission.max_jobs = node;
    o.admission.max_jobs_per_user = user;
    Restart(o);
  }
  static JobRequest Slice() { return GpuSlice(); }
  static api::Caller User(uid_t uid) {
    api::Caller c;
    c.uid = uid;
    c.gid = uid;
    return c;
  }
  static api::Caller Root() { return User(0); }
  Result<JobRecord> Submit(const api::Caller& caller) {
    return node_->Submit(caller, Slice(), std::nullopt, /*hold=*/true);
  }
  // Jobs the store holds: a refused request leaves none.
  size_t Stored() {
    auto all = store_->List(store::ListFilter{});
    return all.ok() ? all->size() : 0;
  }
};

TEST_F(JobRoomTest, AUserAtTheLimitIsRefusedWithOneLineAndNothingIsStored) {
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(Submit(caller_).ok()) << i;
  auto refused = Submit(caller_);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kUnavailable);
  EXPECT_EQ(refused.status().message(),
            "uid 4242 has 4 jobs not yet ended and a user may have at most 4 "
            "(max_jobs_per_user); 1 more must wait until some have ended");
  EXPECT_EQ(Stored(), 4u);
  EXPECT_TRUE(Submit(User(5000)).ok()) << "another user is not held back";
}

TEST_F(JobRoomTest, AnArrayCountsItsTasks) {
  ASSERT_TRUE(Submit(caller_).ok());
  auto spec = ParseArraySpec("1-4");
  ASSERT_TRUE(spec.ok());
  auto refused = node_->SubmitArray(caller_, Slice(), *spec, std::nullopt, true);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kUnavailable);
  EXPECT_NE(refused.status().message().find("has 1 jobs not yet ended"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("; 4 more must wait"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(Stored(), 1u) << "no task of the refused array is stored";
  ASSERT_TRUE(node_->SubmitArray(caller_, Slice(), *ParseArraySpec("1-3"), std::nullopt, true).ok())
      << "three more fit";
}

// Attack: users together fill the node (max_jobs 10 keeps 1 place for root). Root still submits.
TEST_F(JobRoomTest, UsersWhoFillTheNodeLeaveRootItsReserve) {
  for (uid_t uid : {5001, 5002, 5003}) {
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(Submit(User(uid)).ok());
  }
  auto refused = Submit(User(5004));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "the node holds 9 jobs not yet ended and takes at most 9 of users other than root "
            "(max_jobs 10, the rest kept for root); 1 more must wait until some have ended");
  ASSERT_TRUE(Submit(Root()).ok()) << "root's reserve: the tenth job";
  refused = Submit(Root());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "the node holds 10 jobs not yet ended and takes at most 10 (max_jobs); 1 more must "
            "wait until some have ended");
  EXPECT_EQ(Stored(), 10u);
}

TEST_F(JobRoomTest, RootIsNotHeldToThePerUserLimit) {
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(Submit(Root()).ok()) << i;
}

TEST_F(JobRoomTest, RoomComesBackAsJobsEnd) {
  std::vector<JobId> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(Submit(caller_)->id);
  ASSERT_FALSE(Submit(caller_).ok());
  auto cancelled = node_->Cancel(caller_, {ids[0], ids[1]});
  ASSERT_TRUE(cancelled.at(0).ok() && cancelled.at(1).ok());
  EXPECT_TRUE(Submit(caller_).ok()) << "cancelled jobs no longer count, reported or not";
  node_->Step();
  EXPECT_TRUE(Submit(caller_).ok());
  EXPECT_FALSE(Submit(caller_).ok());
}

TEST_F(JobRoomTest, ALeaseCounts) {
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(Submit(caller_).ok());
  LeaseRequest lease;
  lease.gpu_mem_bytes = 1ull << 30;
  lease.gpus = 1;
  auto refused = node_->OpenLease(caller_, lease);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("(max_jobs_per_user)"), std::string::npos)
      << refused.status().message();
}

TEST_F(JobRoomTest, ZeroMeansNoLimit) {
  Limits(0, 0);
  for (int i = 0; i < 30; ++i) ASSERT_TRUE(Submit(caller_).ok()) << i;
}

// Budgets in bytes: a request of 1 MiB (its environment) cost about 1 MB of memory per pending
// job, 19 GB for one user within max_jobs_per_user.
class JobBytesTest : public JobRoomTest {
 protected:
  void SetUp() override {
    NodeOptions o;
    o.inventory = TwoGpus();
    o.admission.max_request_bytes = 64 << 10;
    o.admission.max_user_request_bytes = 100 << 10;
    Restart(o);
  }
  Result<JobRecord> SubmitWithEnv(const api::Caller& caller, size_t env_bytes) {
    JobRequest r = Slice();
    r.env["BIG"] = std::string(env_bytes, 'x');
    return node_->Submit(caller, r, std::nullopt, /*hold=*/true);
  }
};

TEST_F(JobBytesTest, ARequestPastMaxRequestBytesIsRefusedWithOneLine) {
  auto refused = SubmitWithEnv(caller_, 70 << 10);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("(max_request_bytes)"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(refused.status().message().find('\n'), std::string::npos);
  EXPECT_EQ(Stored(), 0u);
  EXPECT_FALSE(SubmitWithEnv(Root(), 70 << 10).ok())
      << "the bound on one request holds for root too";
}

TEST_F(JobBytesTest, OneUsersJobsTakeAtMostMaxUserRequestBytes) {
  ASSERT_TRUE(SubmitWithEnv(caller_, 40 << 10).ok());
  auto second = SubmitWithEnv(caller_, 40 << 10);
  ASSERT_TRUE(second.ok());
  auto refused = SubmitWithEnv(caller_, 40 << 10);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kUnavailable);
  EXPECT_NE(refused.status().message().find("(max_user_request_bytes)"), std::string::npos)
      << refused.status().message();
  auto array = node_->SubmitArray(caller_, Slice(), *ParseArraySpec("1-2"), std::nullopt, true);
  EXPECT_TRUE(array.ok()) << "small requests still fit";
  EXPECT_TRUE(SubmitWithEnv(User(5000), 40 << 10).ok()) << "another user is not held back";
  EXPECT_TRUE(SubmitWithEnv(Root(), 40 << 10).ok()) << "root is not held to it";
  auto cancelled = node_->Cancel(caller_, {second->id});
  ASSERT_TRUE(cancelled.at(0).ok());
  node_->Step();
  EXPECT_TRUE(SubmitWithEnv(caller_, 40 << 10).ok()) << "room comes back as jobs end";
}

// Attack: arrays were counted as one request's bytes however many tasks they had (40 arrays of
// 200 tasks of 245 KiB, 1.9 GiB, against a 64 MiB budget), and naming each task took it out as a
// full record with no check. An array holds its request once per task: a second array that would
// pass the budget is refused, and taking its tasks out moves bytes, never adds them.
TEST_F(JobBytesTest, AnArrayHoldsItsRequestOncePerTask) {
  JobRequest r = Slice();
  r.env["BIG"] = std::string(10 << 10, 'x');  // 6 tasks: about 61 KiB of the 100 KiB budget
  auto first = node_->SubmitArray(caller_, r, *ParseArraySpec("1-6"), std::nullopt, /*hold=*/true);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = node_->SubmitArray(caller_, r, *ParseArraySpec("1-6"), std::nullopt, /*hold=*/true);
  ASSERT_FALSE(second.ok()) << "6 tasks held, 6 more would pass 100 KiB";
  EXPECT_EQ(second.status().code(), Code::kUnavailable);
  EXPECT_NE(second.status().message().find("(max_user_request_bytes)"), std::string::npos)
      << second.status().message();
  EXPECT_FALSE(SubmitWithEnv(caller_, 45 << 10).ok())
      << "nor a job that fits beside one request of it";
  // Naming tasks alone (a release of 2 of them) takes them out of the rest: the user's bytes stay.
  JobId array = first->first.array.array_id;
  for (const auto& s : node_->ReleaseJobs(caller_, {array + 1, array + 2}))
    EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(SubmitWithEnv(caller_, 45 << 10).ok()) << "taking tasks out added no room";
  std::vector<JobId> all;
  for (JobId id = array; id < array + 6; ++id) all.push_back(id);
  for (const auto& s : node_->Cancel(caller_, all)) EXPECT_TRUE(s.ok()) << s.ToString();
  node_->Step();
  EXPECT_TRUE(node_->SubmitArray(caller_, r, *ParseArraySpec("1-6"), std::nullopt, true).ok())
      << "room comes back as the tasks end";
}

TEST(JobRoomConfigTest, DefaultsBoundsAndPrintedConfig) {
  auto c = ParseConfig("{}");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->max_jobs, 100000);
  EXPECT_EQ(c->max_jobs_per_user, 20000);
  EXPECT_EQ(static_cast<size_t>(c->max_jobs), kDefaultMaxJobs);
  EXPECT_EQ(static_cast<size_t>(c->max_jobs_per_user), kDefaultMaxJobsPerUser);
  auto set = ParseConfig(R"({"max_jobs": 0, "max_jobs_per_user": 50})");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->max_jobs, 0);
  EXPECT_EQ(set->max_jobs_per_user, 50);
  for (const char* bad :
       {R"({"max_jobs": -1})", R"({"max_jobs_per_user": "many"})", R"({"max_jobs": 100000000})"}) {
    auto r = ParseConfig(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("config: \"max_jobs"), std::string::npos)
        << r.status().message();
  }
  std::string printed = DefaultConfigJson();
  EXPECT_NE(printed.find("\"max_jobs\": 100000"), std::string::npos) << printed;
  EXPECT_NE(printed.find("\"max_jobs_per_user\": 20000"), std::string::npos) << printed;
}

}  // namespace
}  // namespace pinpoint::daemon
