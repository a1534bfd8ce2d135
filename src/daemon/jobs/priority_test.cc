// A user asks for a higher priority than the node allows: refused in the daemon, whatever client
// sent the request.
#include "daemon/jobs/priority.h"

#include <gtest/gtest.h>

#include "daemon/jobs/fake_users.h"
#include "daemon/jobs/sched_view.h"
#include "daemon/jobs/users.h"

namespace pinpoint::daemon {
namespace {

// A user other than root that every Debian system has, with a group of its own.
class PriorityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto user = LookupName("nobody");
    if (!user.ok()) GTEST_SKIP() << "no user 'nobody' on this machine";
    user_.uid = user->uid;
    user_.gid = user->gid;
    auto group = LookupGroup("nogroup");
    if (group.ok() && *group == user->gid) group_ = "nogroup";
  }
  SystemUserDirectory users_;
  api::Caller user_;
  api::Caller root_;
  std::string group_;
  static constexpr uint32_t kRootDaemon = 0;
};

TEST_F(PriorityTest, UserMayLowerButNotRaisePriority) {
  PriorityPolicy policy;
  EXPECT_TRUE(CheckPriority(policy, user_, kRootDaemon, 0, users_).ok());
  EXPECT_TRUE(CheckPriority(policy, user_, kRootDaemon, -5, users_).ok());
  Status s = CheckPriority(policy, user_, kRootDaemon, 5, users_);
  EXPECT_EQ(s.code(), Code::kPermissionDenied);
  EXPECT_NE(s.message().find("priority_users"), std::string::npos) << s.message();
  EXPECT_EQ(CheckPriority(policy, user_, kRootDaemon, 1000000, users_).code(),
            Code::kPermissionDenied);
}

TEST_F(PriorityTest, RootMaySetAnyPriority) {
  PriorityPolicy policy;
  EXPECT_TRUE(CheckPriority(policy, root_, kRootDaemon, 1000000, users_).ok());
  EXPECT_TRUE(CheckPriority(policy, root_, kRootDaemon, -1000000, users_).ok());
}

TEST_F(PriorityTest, ConfiguredUserOrGroupMayRaisePriority) {
  PriorityPolicy policy;
  policy.priority_users = {"no-such-user-pp", "@no-such-group-pp"};
  EXPECT_EQ(CheckPriority(policy, user_, kRootDaemon, 5, users_).code(), Code::kPermissionDenied);
  policy.priority_users.push_back("nobody");
  EXPECT_TRUE(CheckPriority(policy, user_, kRootDaemon, 5, users_).ok());
  if (group_.empty()) GTEST_SKIP() << "'nobody' has no group 'nogroup' here";
  policy.priority_users = {"@" + group_};
  EXPECT_TRUE(CheckPriority(policy, user_, kRootDaemon, 5, users_).ok());
}

TEST_F(PriorityTest, MaxUserPriorityIsTheBound) {
  PriorityPolicy policy;
  policy.max_user_priority = 10;
  EXPECT_TRUE(CheckPriority(policy, user_, kRootDaemon, 10, users_).ok());
  EXPECT_EQ(CheckPriority(policy, user_, kRootDaemon, 11, users_).code(), Code::kPermissionDenied);
  policy.max_user_priority = -1;  // users' jobs may only be nice
  EXPECT_EQ(CheckPriority(policy, user_, kRootDaemon, 0, users_).code(), Code::kPermissionDenied);
}

TEST_F(PriorityTest, NonRootDaemonsOwnUserIsNotLimited) {
  // A daemon not run as root runs only its own user's jobs: priorities order that user's jobs.
  EXPECT_TRUE(CheckPriority({}, user_, user_.uid, 5, users_).ok());
}

TEST(PriorityUsersTest, GroupsComeFromTheUserDirectory) {
  FakeUserDirectory users;
  users.AddUser(1001, 100, "ana", {200});
  users.AddGroup("gpu", 200);
  users.AddGroup("other", 300);
  api::Caller ana;
  ana.uid = 1001;
  PriorityPolicy policy;
  policy.priority_users = {"@other"};
  EXPECT_EQ(CheckPriority(policy, ana, 0, 5, users).code(), Code::kPermissionDenied);
  policy.priority_users = {"@gpu"};
  EXPECT_TRUE(CheckPriority(policy, ana, 0, 5, users).ok());
  EXPECT_TRUE(CheckPriority(policy, ana, 0, 0, users).ok());
  EXPECT_EQ(users.lookups(),
            (std::vector<std::string>{"uid 1001", "group other", "uid 1001", "group gpu"}))
      << "looked up only when a priority above the bound is asked for";
}

// A class with a users list is theirs and root's; an unknown class is refused naming those there
// are.
TEST_F(PriorityTest, ServiceClassesAreForTheirUsers) {
  std::vector<ServiceClass> classes = DefaultServiceClasses();
  classes.push_back(ServiceClass{.name = "urgent", .priority = 100, .users = {"someone-else"}});
  EXPECT_TRUE(CheckQos(classes, user_, kRootDaemon, "normal", users_).ok());
  EXPECT_TRUE(CheckQos(classes, user_, kRootDaemon, "scavenger", users_).ok());
  Status denied = CheckQos(classes, user_, kRootDaemon, "urgent", users_);
  EXPECT_EQ(denied.code(), Code::kPermissionDenied);
  EXPECT_NE(denied.message().find("urgent"), std::string::npos) << denied.message();
  EXPECT_TRUE(CheckQos(classes, root_, kRootDaemon, "urgent", users_).ok());
  Status unknown = CheckQos(classes, user_, kRootDaemon, "gold", users_);
  EXPECT_EQ(unknown.code(), Code::kInvalidArgument);
  EXPECT_NE(unknown.message().find("normal"), std::string::npos) << unknown.message();
  classes.back().users = {"nobody"};
  EXPECT_TRUE(CheckQos(classes, user_, kRootDaemon, "urgent", users_).ok()) << "named by name";
}

// The scheduler orders a job by its own priority plus its class's: a scavenger job of priority 5
// goes after a normal one of 0; an old record without a class has its own priority alone.
TEST(ServiceClassOrderTest, AClassAddsItsPriority) {
  std::vector<ServiceClass> classes = DefaultServiceClasses();
  JobRecord scavenger, normal, old;
  scavenger.request.priority = 5;
  scavenger.request.qos = "scavenger";
  normal.request.qos = "normal";
  old.request.priority = 3;
  EXPECT_EQ(PriorityOf(scavenger, &classes), -995);
  EXPECT_EQ(DemandOf(scavenger, &classes).priority, -995);
  EXPECT_EQ(PriorityOf(normal, &classes), 0);
  EXPECT_EQ(PriorityOf(old, &classes), 3);
  EXPECT_EQ(PriorityOf(scavenger, nullptr), 5);
}

}  // namespace
}  // namespace pinpoint::daemon
