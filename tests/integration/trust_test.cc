// The trust boundary through the real pinpointd, as a hostile local user would try it: a lock a
// user holds, and descriptors pinpointd holds that must never reach a job (docs/security.md,
// "Locks, descriptors and budgets").
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "common/spawn.h"
#include "integration/harness.h"

namespace pinpoint::testing {
namespace {

// Attack: pinpointd is started holding a root-only file open for writing without close-on-exec
// (a service manager's, a wrapper's). A job of a user must start with stdin, stdout and stderr
// only: not that file, not the shim's lock or pipes, nothing of pinpointd's.
TEST(TrustTest, AJobGetsNoneOfTheDescriptorsPinpointdHolds) {
  Harness h;
  std::string secret = h.dir() + "/root-only";
  int leaked = ::open(secret.c_str(), O_WRONLY | O_CREAT, 0600);  // no O_CLOEXEC: inherited
  ASSERT_GE(leaked, 3);
  h.StartDaemon();
  ::close(leaked);
  CliResult r = h.Cli({"submit", "--wait", "--", "sh", "-c", "ls /proc/$$/fd; true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  CliResult logs = h.Cli({"logs", "1"});
  ASSERT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(logs.out, "0\n1\n2\n") << "the job held more than its standard descriptors";
}

// Attack: a user opens pinpointd.lock (0644 in the state directory until now) and holds a shared
// flock on it, so that pinpointd cannot start after an upgrade or a crash. The lock is now in a
// directory only root enters; the old file decides nothing.
TEST(TrustTest, ALockAUserHoldsDoesNotKeepPinpointdFromStarting) {
  Harness h;
  std::string state = h.dir() + "/state";
  ASSERT_EQ(::mkdir(state.c_str(), 0755), 0);
  int held = ::open((state + "/pinpointd.lock").c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_SH | LOCK_NB), 0);  // as the user would, on a read-only descriptor
  h.StartDaemon();
  struct stat dir {
  }, lock{};
  ASSERT_EQ(::stat((state + "/private").c_str(), &dir), 0);
  ASSERT_EQ(::stat((state + "/private/pinpointd.lock").c_str(), &lock), 0);
  EXPECT_EQ(dir.st_mode & 0777, 0700u);
  EXPECT_EQ(lock.st_mode & 0777, 0600u);
  // The lock still does its work: a second pinpointd on the same state directory is refused.
  std::string out = h.dir() + "/second.log";
  auto second = Spawn({.argv = {BinDir() + "/pinpointd", "--config", h.dir() + "/config.json"},
                       .out = SpawnStream::File(out),
                       .err_to_out = true});
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  std::optional<int> rc = WaitChild(*second, 120'000);  // one that serves is killed at the deadline
  ASSERT_TRUE(rc.has_value()) << "the second pinpointd was not refused";
  EXPECT_TRUE(WIFEXITED(*rc) && WEXITSTATUS(*rc) == 1) << *rc << "\n" << Slurp(out);
  CliResult version = h.Cli({"version"});
  EXPECT_EQ(version.exit_code, 0) << "the first daemon still serves";
  ::close(held);
}

}  // namespace
}  // namespace pinpoint::testing
