// pinpointd on the NVML backend (the fake libnvidia-ml, loaded by name as on a GPU node) whose
// nvmlInit starts a thread, as the real NVML does. Every thread of the daemon must block the
// signals its main loop reads through a signalfd: a thread that does not takes a job's SIGCHLD
// (the end is then seen only at the next poll tick) or dies of SIGTERM instead of stopping.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "integration/harness.h"

namespace pinpoint::testing {
namespace {

// The SigBlk mask of every thread of `pid`, by thread id.
std::vector<std::pair<std::string, unsigned long long>> BlockedMasks(pid_t pid) {
  std::vector<std::pair<std::string, unsigned long long>> masks;
  std::string task_dir = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& entry : std::filesystem::directory_iterator(task_dir)) {
    std::ifstream status(entry.path() / "status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("SigBlk:", 0) == 0)
        masks.emplace_back(entry.path().filename(), std::stoull(line.substr(7), nullptr, 16));
    }
  }
  return masks;
}

bool Blocks(unsigned long long mask, int sig) { return (mask >> (sig - 1)) & 1ULL; }

TEST(DaemonSignalsTest, NvmlThreadsTakeNeitherSigchldNorSigterm) {
  Harness h{"nvml"};
  // libnvidia-ml.so.1 in a directory of its own, found through LD_LIBRARY_PATH.
  std::string lib_dir = h.dir() + "/nvml";
  ASSERT_EQ(::mkdir(lib_dir.c_str(), 0755), 0);
  ASSERT_EQ(::symlink(FAKE_NVML_PATH, (lib_dir + "/libnvidia-ml.so.1").c_str()), 0);
  {
    ScopedEnv path("LD_LIBRARY_PATH", lib_dir);
    ScopedEnv thread("FAKE_NVML_INIT_THREAD", "1");
    h.StartDaemon();
  }
  ASSERT_NE(h.daemon_log().find("using NVML"), std::string::npos) << h.daemon_log();
  auto masks = BlockedMasks(h.daemon_pid());
  EXPECT_GE(masks.size(), 2u) << "the fake NVML's thread is missing";
  for (const auto& [tid, mask] : masks) {
    for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP})
      EXPECT_TRUE(Blocks(mask, sig)) << "thread " << tid << " does not block " << strsignal(sig);
  }
  for (int i = 0; i < 5; ++i) {
    CliResult r = h.Cli({"submit", "--wait", "--", "sh", "-c", "exit 7"});
    EXPECT_EQ(r.exit_code, 7) << r.err;
  }
  int status = h.StopDaemon();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "pinpointd did not stop cleanly (status " << status << ")\n"
      << h.daemon_log();
}

}  // namespace
}  // namespace pinpoint::testing
