// DiskOutputSpace on a real directory: a job's output is what its files occupy on disk (blocks
// preallocated past the end count, a hole does not), a file swapped for a link is never
// followed, and a cut gives the blocks back.
#include "launch/output_space.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/file_util.h"
#include "common/test_dir.h"
#include "launch/shim.h"

namespace pinpoint::launch {
namespace {

class OutputSpaceTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(::mkdir(job_dir_.c_str(), 0700), 0); }
  // A file of the job directory, created empty; its descriptor.
  UniqueFd Create(const char* name) {
    UniqueFd fd(
        ::open((job_dir_ + "/" + name).c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    EXPECT_GE(fd.get(), 0) << name;
    return fd;
  }

  TestDir tmp_;
  const std::string job_dir_ = tmp_.path() + "/7";
  DiskOutputSpace space_{tmp_.path()};
};

TEST_F(OutputSpaceTest, PreallocatedBlocksCountAndAHoleDoesNot) {
  UniqueFd out = Create(kStdoutFile), err = Create(kStderrFile);
  ASSERT_EQ(::fallocate(out.get(), FALLOC_FL_KEEP_SIZE, 0, 1 << 20), 0) << ErrnoText(errno);
  ASSERT_EQ(::ftruncate(err.get(), off_t{1} << 30), 0);  // a 1 GiB hole: its size, no blocks
  struct stat st {};
  ASSERT_EQ(::fstat(out.get(), &st), 0);
  ASSERT_EQ(st.st_size, 0) << "the attack: its size says nothing";
  Result<uint64_t> bytes = space_.OutputBytes(job_dir_);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_GE(*bytes, uint64_t{1} << 20);
  EXPECT_LT(*bytes, uint64_t{2} << 20) << "the hole takes nothing";

  ASSERT_TRUE(space_.Cut(job_dir_, 4096, "\ncut\n").ok());
  bytes = space_.OutputBytes(job_dir_);
  ASSERT_TRUE(bytes.ok());
  EXPECT_LE(*bytes, uint64_t{8} << 10) << "the cut gave the preallocated blocks back";
  EXPECT_EQ(*ReadFile(job_dir_ + "/" + kStderrFile), std::string(4091, '\0') + "\ncut\n");

  Result<DiskSpace> disk = space_.Space();
  ASSERT_TRUE(disk.ok()) << disk.status().ToString();
  EXPECT_GT(disk->total_bytes, 0u);
  EXPECT_LE(disk->free_bytes, disk->total_bytes);
}

// A cut asked for with CutLater is made on the space's own thread (the loop does not wait for the
// pages to be dropped), in order, and one still asked for when the space goes is made first.
TEST_F(OutputSpaceTest, ACutAskedForLaterIsMadeOnAThreadOfItsOwn) {
  UniqueFd out = Create(kStdoutFile), err = Create(kStderrFile);
  std::string text(1 << 20, 'y');
  ASSERT_EQ(::write(out.get(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
  std::promise<std::pair<std::thread::id, Status>> made;
  auto done = made.get_future();
  space_.CutLater(job_dir_, 4096, "\ncut\n", [&made](const Status& s) {
    made.set_value({std::this_thread::get_id(), s});
  });
  ASSERT_EQ(done.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  auto [thread, status] = done.get();
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_NE(thread, std::this_thread::get_id()) << "not the caller's thread";
  struct stat st {};
  ASSERT_EQ(::fstat(out.get(), &st), 0);
  EXPECT_EQ(st.st_size, 4096 - 5) << "stdout keeps what the note leaves of 4096 bytes";

  // Two more, then the space goes at once: both are made, in order, before it has gone.
  std::vector<std::string> order;
  {
    DiskOutputSpace going(tmp_.path());
    going.CutLater(job_dir_, 2048, "\nfirst\n",
                   [&](const Status& s) { order.push_back(s.ok() ? "first" : s.ToString()); });
    going.CutLater(tmp_.path() + "/no-such-job", 0, "", [&](const Status& s) {
      order.push_back(s.code() == Code::kNotFound ? "not found" : s.ToString());
    });
  }
  EXPECT_EQ(order, (std::vector<std::string>{"first", "not found"}));
}

// A stdout swapped for a link (to a big file elsewhere) is refused, never measured or cut
// through: the job directory is pinpointd's, so only a bug could put one there.
TEST_F(OutputSpaceTest, ALinkInPlaceOfAnOutputFileIsNeitherFollowedNorCut) {
  std::string elsewhere = tmp_.path() + "/elsewhere";
  {
    UniqueFd big(::open(elsewhere.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    ASSERT_EQ(::fallocate(big.get(), 0, 0, 1 << 20), 0);
  }
  ASSERT_EQ(::symlink(elsewhere.c_str(), (job_dir_ + "/" + kStdoutFile).c_str()), 0);
  UniqueFd err = Create(kStderrFile);
  Result<uint64_t> bytes = space_.OutputBytes(job_dir_);
  EXPECT_EQ(bytes.status().code(), Code::kIo) << bytes.status().ToString();
  EXPECT_EQ(space_.Cut(job_dir_, 0, "").code(), Code::kIo);
  struct stat st {};
  ASSERT_EQ(::stat(elsewhere.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 1 << 20) << "the file the link names was not cut";
}

TEST_F(OutputSpaceTest, AJobDirectoryWithoutItsFilesIsNotFound) {
  EXPECT_EQ(space_.OutputBytes(job_dir_).status().code(), Code::kNotFound);
  EXPECT_EQ(space_.OutputBytes(tmp_.path() + "/8").status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace pinpoint::launch
