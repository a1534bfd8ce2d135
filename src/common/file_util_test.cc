#include "common/file_util.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "common/test_dir.h"

namespace pinpoint {
namespace {

class FileUtilAtTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::mkdir(dir_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(elsewhere_.c_str(), 0755), 0);
    std::ofstream(victim_) << "precious";
    auto fd = OpenDirNoFollow(dir_);
    ASSERT_TRUE(fd.ok()) << fd.status().ToString();
    dir_fd_ = std::move(fd).value();
  }
  std::string Victim() {
    auto text = ReadFile(victim_);
    return text.ok() ? *text : "<missing>";
  }
  void Plant(const std::string& name) {
    ASSERT_EQ(::symlink(victim_.c_str(), (dir_ + "/" + name).c_str()), 0);
  }

  TestDir tmp_;
  const std::string dir_ = tmp_.path() + "/job";
  const std::string elsewhere_ = tmp_.path() + "/root-only";
  const std::string victim_ = elsewhere_ + "/victim";
  UniqueFd dir_fd_;
};

TEST_F(FileUtilAtTest, WriteAtomicAtReplacesAPlantedLinkInsteadOfWritingThroughIt) {
  Plant("exit.json");
  ASSERT_TRUE(WriteFileAtomicAt(dir_fd_.get(), "exit.json", "new").ok());
  EXPECT_EQ(Victim(), "precious");
  struct stat st {};
  ASSERT_EQ(::lstat((dir_ + "/exit.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode)) << "the link itself was replaced";
  EXPECT_EQ(*ReadFileBoundedAt(dir_fd_.get(), "exit.json", 100), "new");
}

TEST_F(FileUtilAtTest, WriteAtomicAtNeverWritesThroughALinkAtItsTemporaryName) {
  Plant("exit.json.tmp");
  ASSERT_TRUE(WriteFileAtomicAt(dir_fd_.get(), "exit.json", "new").ok());
  EXPECT_EQ(Victim(), "precious");
  EXPECT_EQ(*ReadFileBoundedAt(dir_fd_.get(), "exit.json", 100), "new");
  EXPECT_NE(::access((dir_ + "/exit.json.tmp").c_str(), F_OK), 0) << "no tmp left behind";
}

TEST_F(FileUtilAtTest, OpenAtRefusesLinksAndSpecialFiles) {
  Plant("stdout");
  auto out = OpenFileAt(dir_fd_.get(), "stdout", O_WRONLY | O_CREAT | O_TRUNC, 0640);
  EXPECT_FALSE(out.ok());
  EXPECT_EQ(Victim(), "precious");
  auto fresh = OpenFileAt(dir_fd_.get(), "stdout", O_WRONLY | O_CREAT | O_EXCL, 0640);
  EXPECT_FALSE(fresh.ok()) << "O_EXCL on an existing name";
  ASSERT_EQ(::mkfifo((dir_ + "/fifo").c_str(), 0600), 0);
  auto fifo = OpenFileAt(dir_fd_.get(), "fifo", O_RDONLY);  // must not block either
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(fifo.status().message().find("not a regular file"), std::string::npos);
  EXPECT_FALSE(OpenFileAt(dir_fd_.get(), "../root-only/victim", O_RDONLY).ok());
}

TEST_F(FileUtilAtTest, ReadsFollowNoLinkAndAreBounded) {
  Plant("stderr");
  EXPECT_FALSE(ReadFileTailAt(dir_fd_.get(), "stderr", 100).ok());
  EXPECT_FALSE(ReadFileBoundedAt(dir_fd_.get(), "stderr", 100).ok());
  std::ofstream(dir_ + "/log") << "0123456789";
  EXPECT_EQ(*ReadFileTailAt(dir_fd_.get(), "log", 4), "6789");
  EXPECT_EQ(*ReadFileBoundedAt(dir_fd_.get(), "log", 10), "0123456789");
  auto big = ReadFileBoundedAt(dir_fd_.get(), "log", 9);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("larger than 9 bytes"), std::string::npos);
  EXPECT_EQ(ReadFileTailAt(dir_fd_.get(), "missing", 4).status().code(), Code::kNotFound);
}

TEST_F(FileUtilAtTest, OpenDirRefusesALink) {
  std::string link = tmp_.path() + "/link";
  ASSERT_EQ(::symlink(elsewhere_.c_str(), link.c_str()), 0);
  EXPECT_FALSE(OpenDirNoFollow(link).ok());
  EXPECT_EQ(OpenDirNoFollow(tmp_.path() + "/none").status().code(), Code::kNotFound);
}

TEST_F(FileUtilAtTest, RemoveAtRemovesTheLinkNotItsTarget) {
  Plant("job.pid");
  ASSERT_TRUE(RemoveAt(dir_fd_.get(), "job.pid").ok());
  EXPECT_EQ(Victim(), "precious");
  EXPECT_TRUE(RemoveAt(dir_fd_.get(), "job.pid").ok()) << "missing is fine";
}

TEST_F(FileUtilAtTest, FreshDirMovesWhateverIsThereAside) {
  std::string fresh = tmp_.path() + "/7";
  std::string moved;
  ASSERT_TRUE(MakeFreshDir(fresh, 0755, &moved).ok());
  EXPECT_EQ(moved, "");
  std::ofstream(fresh + "/stdout") << "old run";
  ASSERT_TRUE(MakeFreshDir(fresh, 0755, &moved).ok());
  EXPECT_EQ(moved, fresh + ".stale-1");
  EXPECT_EQ(*ReadFile(moved + "/stdout"), "old run");
  EXPECT_FALSE(ReadFile(fresh + "/stdout").ok()) << "the new directory is empty";
  // A planted link is moved aside as a link: its target is not touched.
  ASSERT_EQ(::rmdir(fresh.c_str()), 0);
  ASSERT_EQ(::symlink(elsewhere_.c_str(), fresh.c_str()), 0);
  ASSERT_TRUE(MakeFreshDir(fresh, 0755, &moved).ok());
  EXPECT_EQ(moved, fresh + ".stale-2");
  EXPECT_EQ(Victim(), "precious");
  struct stat st {};
  ASSERT_EQ(::lstat(fresh.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
}

}  // namespace
}  // namespace pinpoint
