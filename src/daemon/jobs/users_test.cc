#include "daemon/jobs/users.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "daemon/jobs/fake_users.h"

namespace pinpoint::daemon {
namespace {

TEST(UsersTest, TheSystemDirectoryKnowsRoot) {
  SystemUserDirectory users;
  auto root = users.ByUid(0);
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  EXPECT_EQ(root->name, "root");
  auto by_name = users.ByName("root");
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(by_name->uid, 0u);
  EXPECT_EQ(users.ByName("no-such-user-pp").status().code(), Code::kNotFound);
  EXPECT_EQ(users.GroupByName("no-such-group-pp").status().code(), Code::kNotFound);
}

TEST(UsersTest, NameOrUid) {
  FakeUserDirectory users;
  users.AddUser(1001, 1001, "ana");
  EXPECT_EQ(NameOrUid(users, 1001), "ana");
  EXPECT_EQ(NameOrUid(users, 1002), "uid 1002");
}

class CachingUserDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_.AddUser(1001, 100, "ana", {200});
    base_.AddGroup("gpu", 200);
  }
  FakeUserDirectory base_;
  FakeClock clock_;
  CachingUserDirectory cache_{&base_, &clock_, /*ttl_ms=*/60'000};
};

TEST_F(CachingUserDirectoryTest, AnswersAreKeptForTheirTimeToLive) {
  for (int i = 0; i < 3; ++i) {
    auto ana = cache_.ByUid(1001);
    ASSERT_TRUE(ana.ok());
    EXPECT_EQ(ana->name, "ana");
    EXPECT_EQ(ana->groups, (std::vector<uint32_t>{100, 200}));
    EXPECT_EQ(*cache_.GroupByName("gpu"), 200u);
    EXPECT_EQ(cache_.ByName("ana")->uid, 1001u);
  }
  EXPECT_EQ(base_.lookups(), (std::vector<std::string>{"uid 1001", "group gpu", "user ana"}));
  clock_.AdvanceMs(60'000);
  EXPECT_TRUE(cache_.ByUid(1001).ok());
  EXPECT_EQ(base_.lookups().size(), 4u) << "asked again once its answer expired";
}

TEST_F(CachingUserDirectoryTest, UnknownNamesAreKeptTooAndSeenOnceTheyExpire) {
  EXPECT_EQ(cache_.ByUid(1002).status().code(), Code::kNotFound);
  EXPECT_EQ(cache_.ByUid(1002).status().message(), "no user with uid 1002");
  EXPECT_EQ(base_.lookups().size(), 1u);
  base_.AddUser(1002, 1002, "bob");  // added to the system meanwhile
  clock_.AdvanceMs(59'999);
  EXPECT_FALSE(cache_.ByUid(1002).ok());
  clock_.AdvanceMs(1);
  ASSERT_TRUE(cache_.ByUid(1002).ok());
  EXPECT_EQ(cache_.ByUid(1002)->name, "bob");
}

TEST_F(CachingUserDirectoryTest, HoldsAtMostItsBoundOfEachKind) {
  for (uint32_t uid = 0; uid < CachingUserDirectory::kMaxEntries; ++uid)
    (void)cache_.ByUid(5000 + uid);
  size_t asked = base_.lookups().size();
  (void)cache_.ByUid(5000);
  EXPECT_EQ(base_.lookups().size(), asked) << "still cached";
  (void)cache_.ByUid(1001);  // one more than the bound: the cache of uids starts over
  (void)cache_.ByUid(5000);
  EXPECT_EQ(base_.lookups().size(), asked + 2);
}

}  // namespace
}  // namespace pinpoint::daemon
