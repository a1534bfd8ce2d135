// Table tests of Admission (admission.h): each case is the node's options, the jobs it holds, a
// caller and a request, and what Prepare then Admit make of them. No store, no daemon.
#include "daemon/node/admission.h"

#include <gtest/gtest.h>

#include <functional>

#include "daemon/jobs/fake_users.h"
#include "daemon/service/service_fixture.h"

namespace pinpoint::daemon {
namespace {

constexpr uint32_t kAlice = 1000;
constexpr uint32_t kBob = 1001;

struct AdmitCase {
  const char* name;
  std::function<void(NodeOptions&)> options;
  std::function<void(JobRequest&)> request;
  uint32_t caller_uid;
  int held_jobs_of_alice;           // alice's jobs the node already holds
  Code want;                        // kOk: admitted
  const char* want_in_message;      // a part of the one error line ("" to skip)
  const char* want_user = "alice";  // the admitted record's user
};

std::vector<AdmitCase> Cases() {
  auto none = [](auto&) {};
  return {
      {"a slice of alice", none, none, kAlice, 0, Code::kOk, ""},
      {"as_user by a user", none, [](JobRequest& r) { r.as_user = "bob"; }, kAlice, 0,
       Code::kPermissionDenied, "only root"},
      {"as_user by root", none, [](JobRequest& r) { r.as_user = "bob"; }, 0, 0, Code::kOk, "",
       "bob"},
      {"as_user no one is", none, [](JobRequest& r) { r.as_user = "carol"; }, 0, 0,
       Code::kInvalidArgument, "carol"},
      {"a priority above the user's", none, [](JobRequest& r) { r.priority = 5; }, kAlice, 0,
       Code::kPermissionDenied, "priority"},
      {"a priority a priority user may ask",
       [](NodeOptions& o) { o.admission.priority.priority_users = {"alice"}; },
       [](JobRequest& r) { r.priority = 5; }, kAlice, 0, Code::kOk, ""},
      {"a non-root daemon asked for another user",
       [](NodeOptions& o) { o.identity.daemon_uid = kBob; }, none, kAlice, 0,
       Code::kPermissionDenied, "run it as root"},
      // Slurm's GPU type: a model the node has (its GPUs are "NVIDIA H100 80GB HBM3" here), any
      // of its GPUs then; one it has not is refused, naming the models there are.
      {"a GPU type the node has not, by default: any GPU of the node",
       [](NodeOptions& o) {
         for (auto& d : o.inventory.devices) d.name = "NVIDIA H100 80GB HBM3";
       },
       [](JobRequest& r) {
         r.gpu_type = "v100";
         r.gpus = 1;
       },
       kAlice, 0, Code::kOk, ""},
      {"a GPU type the node has",
       [](NodeOptions& o) {
         o.admission.gpu_types_match = true;
         for (auto& d : o.inventory.devices) d.name = "NVIDIA H100 80GB HBM3";
       },
       [](JobRequest& r) {
         r.gpu_type = "nvidia_h100_80gb_hbm3";
         r.gpus = 1;
       },
       kAlice, 0, Code::kOk, ""},
      {"a GPU type the node has not, where types must match",
       [](NodeOptions& o) {
         o.admission.gpu_types_match = true;
         for (auto& d : o.inventory.devices) d.name = "NVIDIA H100 80GB HBM3";
       },
       [](JobRequest& r) {
         r.gpu_type = "a100";
         r.gpus = 1;
       },
       kAlice, 0, Code::kInvalidArgument,
       "GPU type 'a100': this node has no such GPU (its GPUs: NVIDIA H100 80GB HBM3)"},
      {"never fits the node", none, [](JobRequest& r) { r.gpu_mem_bytes = 100ull << 30; }, kAlice,
       0, Code::kFailedPrecondition, ""},
      {"past the user's limit",
       [](NodeOptions& o) {
         o.pass.user_limits["alice"] = sched::UserLimit{std::nullopt, 512ull << 20};
       },
       none, kAlice, 0, Code::kFailedPrecondition, "user_limits"},
      {"another user's limit is not alice's",
       [](NodeOptions& o) {
         o.pass.user_limits["bob"] = sched::UserLimit{std::nullopt, 512ull << 20};
       },
       none, kAlice, 0, Code::kOk, ""},
      {"no room for one more of alice's", [](NodeOptions& o) { o.admission.max_jobs_per_user = 2; },
       none, kAlice, 2, Code::kUnavailable, "max_jobs_per_user"},
      {"root is not counted per user", [](NodeOptions& o) { o.admission.max_jobs_per_user = 2; },
       none, 0, 2, Code::kOk, "", "root"},
      {"one request too large", [](NodeOptions& o) { o.admission.max_request_bytes = 4096; },
       [](JobRequest& r) { r.env["BIG"] = std::string(8192, 'x'); }, kAlice, 0,
       Code::kInvalidArgument, "max_request_bytes"},
      // Two of alice's slices and a half: the third is over.
      {"a service class the node has not", none, [](JobRequest& r) { r.qos = "gold"; }, kAlice, 0,
       Code::kInvalidArgument, "no service class 'gold'"},
      {"a service class for bob alone",
       [](NodeOptions& o) {
         o.admission.qos.push_back(
             ServiceClass{.name = "urgent", .priority = 100, .users = {"bob"}});
       },
       [](JobRequest& r) { r.qos = "urgent"; }, kAlice, 0, Code::kPermissionDenied, "only for bob"},
      {"root in a class for bob alone",
       [](NodeOptions& o) {
         o.admission.qos.push_back(
             ServiceClass{.name = "urgent", .priority = 100, .users = {"bob"}});
       },
       [](JobRequest& r) { r.qos = "urgent"; }, 0, 0, Code::kOk, "", "root"},
      {"the scavenger class is everyone's", none, [](JobRequest& r) { r.qos = "scavenger"; },
       kAlice, 0, Code::kOk, ""},
      {"alice's requests past her budget",
       [](NodeOptions& o) {
         o.admission.max_user_request_bytes = RequestBytes(GpuSlice()) * 5 / 2;
       },
       none, kAlice, 2, Code::kUnavailable, "max_user_request_bytes"},
  };
}

class AdmissionTest : public ::testing::Test {
 protected:
  AdmissionTest() {
    users_.AddUser(0, 0, "root");
    users_.AddUser(kAlice, kAlice, "alice");
    users_.AddUser(kBob, kBob, "bob");
    options_.inventory = TwoGpus();
  }
  api::Caller CallerOf(uint32_t uid) {
    api::Caller c;
    c.uid = uid;
    c.gid = uid;
    return c;
  }
  FakeUserDirectory users_;
  NodeOptions options_;
};

TEST_F(AdmissionTest, EachWayInIsAdmittedOrRefusedWithOneLine) {
  for (const AdmitCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    NodeOptions options = options_;
    c.options(options);
    JobTable jobs(nullptr, nullptr);
    for (int i = 0; i < c.held_jobs_of_alice; ++i) {
      JobRecord held;
      held.id = i + 1;
      held.uid = c.caller_uid;
      held.request = GpuSlice();
      jobs.Add(held);
    }
    Admission admission(&options, &options.inventory, &users_);
    JobRequest request = GpuSlice();
    c.request(request);
    auto prepared = admission.Prepare(request);
    ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
    auto admitted = admission.Admit(CallerOf(c.caller_uid), request, jobs);
    if (c.want == Code::kOk) {
      ASSERT_TRUE(admitted.ok()) << admitted.status().ToString();
      EXPECT_EQ(admitted->user, c.want_user);
      EXPECT_EQ(admitted->request.gpu_mem_bytes, request.gpu_mem_bytes);
      continue;
    }
    ASSERT_FALSE(admitted.ok());
    EXPECT_EQ(admitted.status().code(), c.want) << admitted.status().ToString();
    EXPECT_NE(admitted.status().message().find(c.want_in_message), std::string::npos)
        << admitted.status().message();
    EXPECT_EQ(admitted.status().message().find('\n'), std::string::npos);
  }
}

// A job that names no class is stored in the node's default class; one that names a class keeps it.
TEST_F(AdmissionTest, TheDefaultClassIsStored) {
  options_.admission.default_qos = "scavenger";
  JobTable jobs(nullptr, nullptr);
  Admission admission(&options_, &options_.inventory, &users_);
  auto plain = admission.Admit(CallerOf(kAlice), GpuSlice(), jobs);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->request.qos, "scavenger");
  JobRequest named = GpuSlice();
  named.qos = "normal";
  auto kept = admission.Admit(CallerOf(kAlice), named, jobs);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(kept->request.qos, "normal");
}

// Attack: alice's job script asks for a class only bob may use, and root submits it as alice
// (`pinpoint submit --as-user alice job.sh`): the directive is judged with alice's rights, not
// root's; typed by root on the command line it is root's choice.
TEST_F(AdmissionTest, AScriptsQosIsJudgedAsItsUsersOwn) {
  options_.admission.qos.push_back(ServiceClass{.name = "urgent", .users = {"bob"}});
  JobTable jobs(nullptr, nullptr);
  Admission admission(&options_, &options_.inventory, &users_);
  JobRequest r = GpuSlice();
  r.as_user = "alice";
  r.qos = "urgent";
  auto refused = admission.Admit(CallerOf(0), r, jobs, 1, {{ScriptField::kQos, "job.sh:2"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kPermissionDenied) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("job.sh:2"), std::string::npos)
      << refused.status().message();
  EXPECT_TRUE(admission.Admit(CallerOf(0), r, jobs).ok()) << "root's own choice";
}

TEST_F(AdmissionTest, PrepareDropsDeniedNamesAndAppliesTheTimeLimit) {
  options_.admission.env_deny = {"SECRET_*"};
  options_.admission.default_time_limit_s = 600;
  options_.admission.max_time_limit_s = 3600;
  Admission admission(&options_, &options_.inventory, &users_);
  JobRequest r = GpuSlice();
  r.env = {{"SECRET_TOKEN", "x"}, {"PATH", "/bin"}};
  auto dropped = admission.Prepare(r);
  ASSERT_TRUE(dropped.ok());
  EXPECT_EQ(*dropped, std::vector<std::string>{"SECRET_TOKEN"});
  EXPECT_EQ(r.env.count("SECRET_TOKEN"), 0u) << "a denied value is never kept";
  EXPECT_EQ(r.time_limit_s, 600);
  JobRequest over = GpuSlice();
  over.time_limit_s = 7200;
  EXPECT_EQ(admission.Prepare(over).status().code(), Code::kFailedPrecondition);
  JobRequest bad = GpuSlice();
  bad.argv.clear();
  EXPECT_EQ(admission.Prepare(bad).status().code(), Code::kInvalidArgument);
}

TEST_F(AdmissionTest, AnArrayIsCheckedForItsSizeAndStandsForItsTasks) {
  options_.admission.max_array_tasks = 4;
  options_.admission.max_jobs_per_user = 3;
  Admission admission(&options_, &options_.inventory, &users_);
  JobRequest r = GpuSlice();
  EXPECT_EQ(admission.PrepareArray(r, ArraySpec{{}, 0}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(admission.PrepareArray(r, ArraySpec{{1, 2, 3, 4, 5}, 0}).status().code(),
            Code::kInvalidArgument);
  ASSERT_TRUE(admission.PrepareArray(r, ArraySpec{{1, 2, 3}, 0}).ok());
  JobTable jobs(nullptr, nullptr);
  EXPECT_TRUE(admission.Admit(CallerOf(kAlice), r, jobs, 3).ok());
  auto four = admission.Admit(CallerOf(kAlice), r, jobs, 4);
  EXPECT_EQ(four.status().code(), Code::kUnavailable) << "4 tasks are 4 jobs of alice's";
}

}  // namespace
}  // namespace pinpoint::daemon
