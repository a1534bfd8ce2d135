// Links planted in a job's directory (docs/security.md): the daemon and the shim, running as
// root, never write or read through one.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "launch/process_launcher_fixture.h"

namespace pinpoint::launch {
namespace {

class PlantedLinkTest : public ProcessLauncherTest {
 protected:
  void SetUp() override {
    ASSERT_EQ(::mkdir(root_only_.c_str(), 0700), 0);
    std::ofstream(victim_) << "root's file";
    ASSERT_EQ(::chmod(victim_.c_str(), 0600), 0);
    ASSERT_EQ(::stat(victim_.c_str(), &before_), 0);
  }
  // What a hostile user would leave in a job directory before the job starts.
  void PlantLinks(const std::string& job_dir) {
    ASSERT_TRUE(MakeDirs(job_dir).ok());
    for (const char* name : {kStdoutFile, kStderrFile, "exit.json.tmp", kExitFile, kJobPidFile,
                             kSpecFile, "spec.json.tmp", kLockFile, kExitSlotFile})
      ASSERT_EQ(::symlink(victim_.c_str(), (job_dir + "/" + name).c_str()), 0) << name;
  }
  void ExpectVictimUntouched() {
    auto text = ReadFile(victim_);
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(*text, "root's file");
    struct stat after {};
    ASSERT_EQ(::stat(victim_.c_str(), &after), 0);
    EXPECT_EQ(after.st_uid, before_.st_uid);
    EXPECT_EQ(after.st_gid, before_.st_gid);
    EXPECT_EQ(after.st_mode, before_.st_mode);
  }

  const std::string root_only_ = dir_ + "/root-only";
  const std::string victim_ = root_only_ + "/victim";
  struct stat before_ {};
};

TEST_F(PlantedLinkTest, LinksInALeftoverJobDirectoryAreNeverWrittenThrough) {
  LaunchSpec s = Spec(20, {"sh", "-c", "echo fresh; echo err >&2"});
  if (::geteuid() == 0) {  // as pinpointd runs: the job as another user, its logs chowned
    s.switch_user = true;
    s.uid = 65534;
    s.gid = 65534;
    s.groups = {65534};
  }
  PlantLinks(s.job_dir);
  auto h = launcher_.Launch(s);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  WaitSupervisor(*h);
  auto st = launcher_.Poll(*h);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->kind, ExitStatus::Kind::kExited) << st->error;
  EXPECT_EQ(ReadLog(*h, kStdoutFile), "fresh\n");
  ExpectVictimUntouched();
  struct stat moved {};
  EXPECT_EQ(::lstat((s.job_dir + ".stale-1/" + kStdoutFile).c_str(), &moved), 0);
  EXPECT_TRUE(S_ISLNK(moved.st_mode)) << "the leftover was moved aside as it was";
}

TEST_F(PlantedLinkTest, AJobDirectoryThatIsALinkIsMovedAsideNotEntered) {
  LaunchSpec s = Spec(21, {"true"});
  ASSERT_TRUE(MakeDirs(dir_ + "/jobs").ok());
  ASSERT_EQ(::symlink(root_only_.c_str(), s.job_dir.c_str()), 0);
  auto h = launcher_.Launch(s);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  WaitSupervisor(*h);
  EXPECT_EQ(launcher_.Poll(*h)->kind, ExitStatus::Kind::kExited);
  ExpectVictimUntouched();
  EXPECT_NE(::access((root_only_ + "/" + kStdoutFile).c_str(), F_OK), 0);
}

TEST_F(PlantedLinkTest, ShimItselfNeverWritesThroughALinkInItsDirectory) {
  // The launcher's fresh directory aside: the shim alone, given a directory with a link at stdout.
  LaunchSpec s = Spec(23, {"sh", "-c", "echo through"});
  if (::geteuid() == 0) {
    s.switch_user = true;
    s.uid = s.gid = 65534;
    s.groups = {65534};
  }
  ASSERT_TRUE(MakeDirs(s.job_dir).ok());
  auto dir = OpenJobDir(s.job_dir);
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  ASSERT_TRUE(WriteSpec(dir->get(), s).ok());
  ASSERT_TRUE(CreateExitSlot(dir->get()).ok());
  ASSERT_EQ(::symlink(victim_.c_str(), (s.job_dir + "/" + kStdoutFile).c_str()), 0);
  int lock = ::open((s.job_dir + "/" + kLockFile).c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(lock, 0);
  constexpr int kLockFd = 3;
  auto pid = Spawn({.argv = {PINPOINT_BIN_DIR "/pinpoint-shim", s.job_dir, std::to_string(kLockFd)},
                    .pass_fds = {{lock, kLockFd}}});
  ::close(lock);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  JobHandle h;
  h.job_id = 23;
  h.job_dir = s.job_dir;
  h.pid = *pid;
  WaitSupervisor(h);
  auto st = launcher_.Poll(h);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->kind, ExitStatus::Kind::kLaunchFailed);
  EXPECT_NE(st->error.find("cannot create the job's stdout"), std::string::npos) << st->error;
  ExpectVictimUntouched();
}

TEST_F(PlantedLinkTest, DaemonReadsOfTheJobDirectoryFollowNoLink) {
  std::string job_dir = dir_ + "/jobs/22";
  PlantLinks(job_dir);
  std::ofstream(victim_)
      << "{\"kind\":\"exited\",\"exit_code\":0,\"term_signal\":0,\"error\":\"\"}";
  ASSERT_EQ(::chmod(victim_.c_str(), 0600), 0);
  ASSERT_EQ(::stat(victim_.c_str(), &before_), 0);
  EXPECT_FALSE(ReadExitStatus(job_dir).ok()) << "exit.json is a link: not read";
  EXPECT_EQ(ReadJobPid(job_dir), 0);
  JobHandle h;
  h.job_id = 22;
  h.job_dir = job_dir;
  auto st = launcher_.Poll(h);  // the lock is a link too: no supervisor was ever started here
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->kind, ExitStatus::Kind::kNeverLaunched);
}

}  // namespace
}  // namespace pinpoint::launch
