// The job store lost or damaged around a real pinpointd: refused at start with one line and a
// non-zero exit, reported once while running (submits fail with that line), and ids that never
// go back to a used job directory.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "common/spawn.h"
#include "integration/harness.h"

namespace pinpoint::testing {
namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Runs pinpointd on the harness's config to its exit (it is expected to refuse to start);
// returns its exit code and writes its output to `log`.
int RunDaemonToExit(const Harness& h, const std::string& log) {
  auto pid = Spawn({.argv = {BinDir() + "/pinpointd", "--config", h.dir() + "/config.json"},
                    .out = SpawnStream::File(log),
                    .err_to_out = true});
  EXPECT_TRUE(pid.ok()) << pid.status().ToString();
  if (!pid.ok()) return -1;
  std::optional<int> status = WaitChild(*pid, 120'000);
  EXPECT_TRUE(status.has_value()) << "pinpointd neither served nor stopped in time: killed";
  if (!status) return -1;
  return WIFEXITED(*status) ? WEXITSTATUS(*status) : 128 + WTERMSIG(*status);
}

class StoreLossTest : public ::testing::Test {
 protected:
  std::string Db() const { return h_.dir() + "/state/pinpoint.db"; }
  // Submits `n` jobs that end at once and returns the id of the last.
  int SubmitJobs(int n) {
    int last = 0;
    for (int i = 0; i < n; ++i) {
      auto r = h_.Cli({"submit", "--wait", "--", "true"});
      EXPECT_EQ(r.exit_code, 0) << r.err;
      auto show = h_.Cli({"--json", "queue", "--all"});
      last = static_cast<int>(Count(show.out, "\"id\""));
    }
    return last;
  }
  Harness h_;
};

TEST_F(StoreLossTest, DamagedStoreIsRefusedAtStartWithOneLine) {
  ::setenv("PP_STORE_PADDING", std::string(3000, 'p').c_str(), 1);  // each record spans pages
  h_.StartDaemon();
  SubmitJobs(12);
  ASSERT_EQ(h_.StopDaemon(), 0);  // a clean stop folds the WAL into the file
  ::unsetenv("PP_STORE_PADDING");
  std::string bytes = Slurp(Db());
  ASSERT_GT(bytes.size(), 8u * 4096);
  for (size_t i = 2 * 4096; i < 4 * 4096; ++i) bytes[i] = static_cast<char>(0xA5 ^ (i & 0xff));
  std::ofstream(Db(), std::ios::binary | std::ios::trunc) << bytes;

  std::string log = h_.dir() + "/refused.log";
  EXPECT_NE(RunDaemonToExit(h_, log), 0);
  std::string out = Slurp(log);
  EXPECT_EQ(Count(out, "cannot start:"), 1u) << out;
  EXPECT_EQ(Count(out, "is damaged"), 1u) << out;
  EXPECT_NE(out.find("Recovering a damaged store"), std::string::npos) << out;
  EXPECT_EQ(Slurp(Db()), bytes) << "a refused store is not written to";
}

TEST_F(StoreLossTest, StoreDeletedUnderTheDaemonFailsSubmitsAndIsLoggedOnce) {
  h_.StartDaemon();
  ASSERT_EQ(h_.Cli({"submit", "--", "true"}).exit_code, 0);
  ASSERT_EQ(::unlink(Db().c_str()), 0);
  for (int i = 0; i < 2; ++i) {
    auto r = h_.Cli({"submit", "--", "true"});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(Count(r.err, "\n"), 1u) << r.err;
    EXPECT_NE(r.err.find("was deleted while pinpointd ran"), std::string::npos) << r.err;
  }
  ASSERT_EQ(h_.StopDaemon(), 0);
  std::string log = h_.daemon_log();
  // The main loop's own line, once (writes that fail also name the problem in their lines).
  EXPECT_EQ(Count(log, " error job store "), 1u) << log;
  EXPECT_FALSE(std::filesystem::exists(Db())) << "nothing recreated it behind the admin's back";
}

TEST_F(StoreLossTest, LostStoreNeverReusesAJobDirectory) {
  h_.StartDaemon();
  int last = SubmitJobs(3);
  ASSERT_EQ(last, 3);
  ASSERT_EQ(h_.StopDaemon(), 0);
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(Db() + suffix);
  std::filesystem::remove(h_.dir() + "/state/pinpoint.last-id");  // the job directories remain

  h_.StartDaemon();
  auto r = h_.Cli({"--json", "submit", "--wait", "--", "true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("\"id\": 1,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"id\": 4,"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace pinpoint::testing
