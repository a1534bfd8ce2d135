// RemoveTreeAt against the trees a hostile job could leave: links out of the tree, the tree
// itself a link, trees deeper or larger than the budget.
#include "common/remove_tree.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "common/file_util.h"
#include "common/test_dir.h"

namespace pinpoint {
namespace {

bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

class RemoveTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // "outside" stands for a root-owned directory the job must never reach.
    outside_ = dir_.path() + "/outside";
    jobs_ = dir_.path() + "/jobs";
    ASSERT_EQ(::mkdir(outside_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(jobs_.c_str(), 0755), 0);
    std::ofstream(outside_ + "/precious") << "keep me";
    ASSERT_EQ(::mkdir((outside_ + "/sub").c_str(), 0755), 0);
    std::ofstream(outside_ + "/sub/also") << "keep me too";
    jobs_fd_ = std::move(OpenDirNoFollow(jobs_)).value();
  }
  Status Remove(const std::string& name, RemoveTreeBudget budget = {}) {
    return RemoveTreeAt(jobs_fd_.get(), name, &budget);
  }
  void ExpectOutsideIntact() {
    EXPECT_TRUE(Exists(outside_ + "/precious"));
    EXPECT_TRUE(Exists(outside_ + "/sub/also"));
  }

  TestDir dir_;
  std::string outside_, jobs_;
  UniqueFd jobs_fd_;
};

TEST_F(RemoveTreeTest, RemovesATreeOfFilesAndDirectories) {
  ASSERT_EQ(std::system(("mkdir -p " + jobs_ + "/7/a/b/c && touch " + jobs_ + "/7/stdout " + jobs_ +
                         "/7/a/b/c/d && mkfifo " + jobs_ + "/7/a/fifo")
                            .c_str()),
            0);
  ASSERT_TRUE(Remove("7").ok());
  EXPECT_FALSE(Exists(jobs_ + "/7"));
  EXPECT_TRUE(Remove("7").ok()) << "a missing tree is no error";
}

TEST_F(RemoveTreeTest, ALinkInsideToADirectoryWithFilesIsRemovedNotFollowed) {
  ASSERT_EQ(::mkdir((jobs_ + "/7").c_str(), 0755), 0);
  ASSERT_EQ(::symlink(outside_.c_str(), (jobs_ + "/7/escape").c_str()), 0);
  ASSERT_EQ(::symlink((outside_ + "/precious").c_str(), (jobs_ + "/7/file").c_str()), 0);
  ASSERT_TRUE(Remove("7").ok());
  EXPECT_FALSE(Exists(jobs_ + "/7"));
  ExpectOutsideIntact();
}

TEST_F(RemoveTreeTest, ATreeThatIsALinkIsRemovedItself) {
  ASSERT_EQ(::symlink(outside_.c_str(), (jobs_ + "/7").c_str()), 0);
  ASSERT_TRUE(Remove("7").ok());
  EXPECT_FALSE(Exists(jobs_ + "/7"));
  ExpectOutsideIntact();
}

TEST_F(RemoveTreeTest, ATreeDeeperThanTheBoundIsRefusedAndLeftInside) {
  std::string path = jobs_ + "/7";
  for (int i = 0; i < 80; ++i) path += "/d";
  ASSERT_EQ(std::system(("mkdir -p " + path).c_str()), 0);
  RemoveTreeBudget budget;
  budget.max_depth = 64;
  Status s = Remove("7", budget);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("deeper than 64"), std::string::npos) << s.message();
  ExpectOutsideIntact();
}

TEST_F(RemoveTreeTest, ABudgetSpentLeavesTheRestForTheNextCall) {
  ASSERT_EQ(::mkdir((jobs_ + "/7").c_str(), 0755), 0);
  for (int i = 0; i < 50; ++i) std::ofstream(jobs_ + "/7/f" + std::to_string(i)) << i;
  RemoveTreeBudget budget;
  budget.entries_left = 20;
  Status s = RemoveTreeAt(jobs_fd_.get(), "7", &budget);
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.ToString();
  EXPECT_EQ(budget.entries_left, 0);
  EXPECT_TRUE(Exists(jobs_ + "/7"));
  budget.entries_left = 100;
  EXPECT_TRUE(RemoveTreeAt(jobs_fd_.get(), "7", &budget).ok());
  EXPECT_EQ(budget.entries_left, 100 - 31) << "the 30 files left and the directory";
  EXPECT_FALSE(Exists(jobs_ + "/7"));
}

}  // namespace
}  // namespace pinpoint
