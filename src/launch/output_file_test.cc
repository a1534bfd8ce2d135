// submit -o/-e: the job's output files are opened by the job's process as the job's user, with
// no link followed in the last component. Attacks from a user on pinpoint-shim, which runs as
// root: a link to a root-owned file, a directory the user cannot write, a root-only file (a
// stand-in for /etc/shadow, so that a regression cannot destroy the machine's own). The job runs
// as uid 65534; they need root to switch to it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "common/file_util.h"
#include "common/test_dir.h"
#include "launch/process_launcher.h"

namespace pinpoint::launch {
namespace {

// A file's text, or "" when it cannot be read.
std::string Text(const std::string& path) {
  auto text = ReadFile(path);
  return text.ok() ? *text : "";
}

constexpr uint32_t kNobody = 65534;

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to run the job as another user";
    ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(home_.c_str(), 0755), 0);
    ASSERT_EQ(::chown(home_.c_str(), kNobody, kNobody), 0);
    ASSERT_EQ(::mkdir(root_dir_.c_str(), 0755), 0);  // readable, not writable, by the user
    std::ofstream(shadow_) << "root:$6$secret:19000:0:99999:7:::\n";
    ASSERT_EQ(::chmod(shadow_.c_str(), 0640), 0);
    std::ofstream(root_file_) << "root's file\n";
    ASSERT_EQ(::chmod(root_file_.c_str(), 0644), 0);
  }

  // Runs `script` as the user with these output files; returns how it ended.
  ExitStatus Run(const std::string& out, const std::string& err, const std::string& script) {
    LaunchSpec s;
    s.job_id = ++id_;
    s.argv = {"sh", "-c", script};
    s.cwd = "/";
    s.env = {"PATH=/usr/bin:/bin"};
    s.job_dir = dir_ + "/jobs/" + std::to_string(id_);
    s.switch_user = true;
    s.uid = s.gid = kNobody;
    s.groups = {kNobody};
    s.stdout_path = out;
    s.stderr_path = err;
    auto h = launcher_.Launch(s);
    EXPECT_TRUE(h.ok()) << h.status().ToString();
    if (!h.ok()) return {};
    int status = 0;
    EXPECT_EQ(::waitpid(static_cast<pid_t>(h->pid), &status, 0), h->pid);
    auto st = launcher_.Poll(*h);
    EXPECT_TRUE(st.has_value());
    return st.value_or(ExitStatus{});
  }
  void ExpectUnchanged(const std::string& path, const std::string& text) {
    auto now = ReadFile(path);
    ASSERT_TRUE(now.ok()) << path;
    EXPECT_EQ(*now, text) << path;
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 0u) << path;
  }

  TestDir tmp_;
  const std::string dir_ = tmp_.path();
  const std::string home_ = dir_ + "/home";
  const std::string root_dir_ = dir_ + "/root-dir";
  const std::string shadow_ = root_dir_ + "/shadow";
  const std::string root_file_ = root_dir_ + "/root-file";
  // Its look at the node's processes spends no budget (a clock that stands still): a pass of these
  // tests reads every process, however loaded the machine; the budget has tests of its own
  // (process_scan_test.cc).
  ProcessLauncher launcher_{PINPOINT_BIN_DIR "/pinpoint-shim", ProcessKeys(),
                            ProcessScan([] { return int64_t{0}; })};
  JobId id_ = 0;
};

TEST_F(OutputFileTest, BothStreamsGoToTheUsersFileOwnedByTheUser) {
  std::string out = home_ + "/out";
  std::ofstream(out) << "an older, longer run's output that must not remain\n";
  ASSERT_EQ(::chown(out.c_str(), kNobody, kNobody), 0);
  ExitStatus st = Run(out, out, "echo to-out; echo to-err >&2");
  EXPECT_EQ(st.kind, ExitStatus::Kind::kExited) << st.error;
  EXPECT_EQ(Text(out), "to-out\nto-err\n");
  std::string fresh = home_ + "/fresh", err = home_ + "/err";
  st = Run(fresh, err, "echo o; echo e >&2");
  EXPECT_EQ(st.kind, ExitStatus::Kind::kExited) << st.error;
  EXPECT_EQ(Text(fresh), "o\n");
  EXPECT_EQ(Text(err), "e\n");
  struct stat made {};
  ASSERT_EQ(::stat(fresh.c_str(), &made), 0);
  EXPECT_EQ(made.st_uid, kNobody) << "created by the job's user, not by root";
}

TEST_F(OutputFileTest, LinkToARootFileIsRefusedAndTheFileUntouched) {
  std::string link = home_ + "/out";
  ASSERT_EQ(::symlink(root_file_.c_str(), link.c_str()), 0);
  ExitStatus st = Run(link, "", "echo overwritten");
  EXPECT_EQ(st.kind, ExitStatus::Kind::kLaunchFailed);
  EXPECT_EQ(st.error, "cannot write the job's output to " + link + ": it is a symbolic link");
  ExpectUnchanged(root_file_, "root's file\n");
  // The same through -e alone.
  st = Run("", link, "echo overwritten >&2");
  EXPECT_EQ(st.kind, ExitStatus::Kind::kLaunchFailed);
  EXPECT_NE(st.error.find("cannot write the job's errors to"), std::string::npos) << st.error;
  ExpectUnchanged(root_file_, "root's file\n");
}

TEST_F(OutputFileTest, DirectoryTheUserCannotWriteIsRefusedAndNothingCreated) {
  std::string out = root_dir_ + "/new";
  ExitStatus st = Run(out, "", "echo x");
  EXPECT_EQ(st.kind, ExitStatus::Kind::kLaunchFailed);
  EXPECT_EQ(st.error, "cannot write the job's output to " + out + ": Permission denied");
  struct stat gone {};
  EXPECT_NE(::stat(out.c_str(), &gone), 0) << "root created it";
}

TEST_F(OutputFileTest, RootOnlyFileLikeEtcShadowIsNeitherTruncatedNorWritten) {
  ExitStatus st = Run(shadow_, "", "echo pwned");
  EXPECT_EQ(st.kind, ExitStatus::Kind::kLaunchFailed);
  EXPECT_EQ(st.error, "cannot write the job's output to " + shadow_ + ": Permission denied");
  ExpectUnchanged(shadow_, "root:$6$secret:19000:0:99999:7:::\n");
}

TEST_F(OutputFileTest, FifoIsRefusedNotWaitedOn) {
  std::string fifo = home_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  ASSERT_EQ(::chown(fifo.c_str(), kNobody, kNobody), 0);
  ExitStatus st = Run(fifo, "", "echo x");
  EXPECT_EQ(st.kind, ExitStatus::Kind::kLaunchFailed);
  EXPECT_EQ(st.error, "cannot write the job's output to " + fifo + ": not a regular file");
  st = Run("/dev/null", "", "echo discarded");
  EXPECT_EQ(st.kind, ExitStatus::Kind::kExited) << st.error;
}

}  // namespace
}  // namespace pinpoint::launch
