// pinpointd's start on machines it must not mistake for others (docs/admin.md, "Backends";
// docs/mps.md, "Which implementation"): a GPU machine whose NVML fails stops with one line and
// never becomes a simulated node; a machine without an NVIDIA device runs a simulated node and says
// so loudly; a GPU node where MPS cannot be started refuses slices and still runs whole GPUs,
// unless the configuration opts out. The machine is laid out in a directory (--device-root), and
// NVML is the fake libnvidia-ml, loaded by name as on a GPU node.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/spawn.h"
#include "integration/harness.h"

namespace pinpoint::testing {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A machine under <dir>/<name>: with a GPU, /dev/nvidia0 and /dev/nvidiactl (plain files: only
// names are read); without, only /dev/null.
std::string MachineRoot(const std::string& dir, const std::string& name, bool gpu) {
  std::string root = dir + "/" + name;
  std::filesystem::create_directories(root + "/dev");
  std::ofstream(root + "/dev/null");
  if (gpu) {
    std::ofstream(root + "/dev/nvidia0");
    std::ofstream(root + "/dev/nvidiactl");
  }
  return root;
}

// A directory holding libnvidia-ml.so.1, the fake NVML, for LD_LIBRARY_PATH.
std::string FakeNvmlDir(const std::string& dir) {
  std::string lib_dir = dir + "/nvml";
  std::filesystem::create_directories(lib_dir);
  std::filesystem::create_symlink(FAKE_NVML_PATH, lib_dir + "/libnvidia-ml.so.1");
  return lib_dir;
}

struct Ended {
  int status = -1;
  std::string out;
  std::string err;
};

// Runs pinpointd on h's configuration with `args`, expecting it to stop before it serves: if it
// signals readiness instead, it is killed and the test fails.
Ended RunDaemonToExit(const Harness& h, const std::vector<std::string>& args) {
  constexpr int kReadyFd = 3, kDeadlineMs = 120'000;
  int ready[2];
  EXPECT_EQ(::pipe2(ready, O_CLOEXEC), 0);
  std::vector<std::string> argv = {BinDir() + "/pinpointd", "--config", h.dir() + "/config.json",
                                   "--ready-fd", std::to_string(kReadyFd)};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string out = h.dir() + "/exit.out", err = h.dir() + "/exit.err";
  auto pid = Spawn({.argv = argv,
                    .out = SpawnStream::File(out),
                    .err = SpawnStream::File(err),
                    .pass_fds = {{ready[1], kReadyFd}}});
  ::close(ready[1]);
  Ended e;
  if (!pid.ok()) {
    ::close(ready[0]);
    ADD_FAILURE() << pid.status().ToString();
    return e;
  }
  pollfd p{ready[0], POLLIN, 0};
  char buf[16] = {};
  ssize_t n =
      ::poll(&p, 1, kDeadlineMs) > 0 ? ::read(ready[0], buf, sizeof(buf)) : 1;  // EOF once it exits
  ::close(ready[0]);
  if (n > 0) {
    ADD_FAILURE() << "pinpointd started serving, or neither served nor stopped in time";
    ::kill(*pid, SIGKILL);
  }
  e.status = WaitChild(*pid, kDeadlineMs).value_or(-1);
  e.out = Slurp(out);
  e.err = Slurp(err);
  return e;
}

TEST(StartupTest, GpuMachineWhoseNvmlFailsStopsWithOneLine) {
  Harness h{"auto"};
  std::string root = MachineRoot(h.dir(), "gpu-machine", /*gpu=*/true);
  ScopedEnv path("LD_LIBRARY_PATH", FakeNvmlDir(h.dir()));
  ScopedEnv fail("FAKE_NVML_INIT_FAIL", "1");
  Ended e = RunDaemonToExit(h, {"--device-root", root});
  ASSERT_TRUE(WIFEXITED(e.status)) << e.status;
  EXPECT_EQ(WEXITSTATUS(e.status), 2);
  EXPECT_EQ(std::count(e.err.begin(), e.err.end(), '\n'), 1) << e.err;
  EXPECT_THAT(e.err,
              StartsWith("pinpointd: this machine has an NVIDIA device (/dev/nvidia0) but NVML "
                         "not available (nvmlInit_v2 failed: "));
  EXPECT_THAT(e.err, EndsWith("): repair the driver until nvidia-smi works, or set backend to "
                              "simulated:<preset> to run a simulated node on purpose\n"));
  EXPECT_EQ(e.out, "");
  // It stopped before touching anything: no state directory, no socket.
  EXPECT_FALSE(std::filesystem::exists(h.dir() + "/state"));
  EXPECT_FALSE(std::filesystem::exists(h.socket()));
}

// config system_cpus: no job runs on them, one with CPUs of its own or one that shares; a list
// that leaves no CPU stops pinpointd with one line.
TEST(StartupTest, SystemCpusAreNoJobsAndAListLeavingNoneStopsWithOneLine) {
  {
    Harness h{"simulated:h100x2", R"("system_cpus": "0-65535")"};
    Ended e = RunDaemonToExit(h, {});
    ASSERT_TRUE(WIFEXITED(e.status)) << e.status;
    EXPECT_EQ(WEXITSTATUS(e.status), 1);
    EXPECT_THAT(e.out, HasSubstr(" critical cannot start: config: \"system_cpus\" (0-65535) "
                                 "leaves no online CPU for jobs\n"));
    EXPECT_FALSE(std::filesystem::exists(h.dir() + "/state")) << "before it made anything";
  }
  long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 2) GTEST_SKIP() << "one CPU: none to keep";
  Harness h{"simulated:h100x2", R"("system_cpus": "0", "cgroups": false)"};
  h.StartDaemon();
  EXPECT_THAT(h.daemon_log(), HasSubstr("host CPUs: 0 kept for the system (system_cpus)"));
  // One CPU of its own, then one asking for every CPU of the node: too few are free, it shares.
  for (const std::string& want : {std::string("1"), std::to_string(cpus)}) {
    CliResult r = h.Cli({"--json", "submit", "--wait", "--cpus", want, "--", "grep",
                         "Cpus_allowed_list", "/proc/self/status"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    size_t at = r.out.find("\"id\":");
    ASSERT_NE(at, std::string::npos) << r.out;
    std::string id = std::to_string(std::stoll(r.out.substr(at + 5)));
    std::string line = Slurp(h.dir() + "/state/jobs/" + id + "/stdout");
    EXPECT_THAT(line, StartsWith("Cpus_allowed_list:\t")) << want;
    EXPECT_THAT(line, ::testing::Not(HasSubstr("\t0"))) << want << ": " << line;
    if (want == "1") {
      EXPECT_EQ(line, "Cpus_allowed_list:\t1\n");
    }
  }
}

// Starts h's pinpointd on a machine with or without a GPU, whose nvmlInit fails.
void StartWithFailingNvml(Harness& h, bool gpu) {
  std::string root = MachineRoot(h.dir(), "machine", gpu);
  ScopedEnv path("LD_LIBRARY_PATH", FakeNvmlDir(h.dir()));
  ScopedEnv fail("FAKE_NVML_INIT_FAIL", "1");
  h.set_daemon_args({"--device-root", root});
  h.StartDaemon();
}

TEST(StartupTest, GpuMachineRunsASimulatedNodeWhenAskedTo) {
  Harness h{"simulated:h100x2"};
  StartWithFailingNvml(h, /*gpu=*/true);
  EXPECT_THAT(h.daemon_log(), HasSubstr("starting; using simulated node h100x2 (as asked)"));
}

TEST(StartupTest, MachineWithoutGpuRunsASimulatedNodeLoudly) {
  Harness h{"auto"};
  StartWithFailingNvml(h, /*gpu=*/false);
  std::string log = h.daemon_log();
  EXPECT_THAT(log, HasSubstr(" warning pinpointd "));
  EXPECT_THAT(log,
              HasSubstr(" starting; no NVIDIA device on this machine: running a SIMULATED node "
                        "h100x2 (NVML not available (nvmlInit_v2 failed: "));
  CliResult r = h.Cli({"submit", "--wait", "--gpu-mem", "4G", "--", "true"});
  EXPECT_EQ(r.exit_code, 0) << r.err;  // slices run on a simulated node
}

// A GPU node (the fake NVML: a whole H100 and an A100 with two MIG instances) whose MPS control
// binary is missing.
class NoMpsTest : public ::testing::Test {
 protected:
  void Start(const std::string& extra_config) {
    h_ = std::make_unique<Harness>(
        "auto", R"("cgroups": false, "mps_control": "/nonexistent/nvidia-cuda-mps-control")" +
                    extra_config);
    std::string root = MachineRoot(h_->dir(), "gpu-machine", /*gpu=*/true);
    ScopedEnv path("LD_LIBRARY_PATH", FakeNvmlDir(h_->dir()));
    h_->set_daemon_args({"--device-root", root});
    h_->StartDaemon();
    ASSERT_THAT(h_->daemon_log(), HasSubstr("starting; using NVML: 2 GPUs"));
  }
  std::unique_ptr<Harness> h_;
};

TEST_F(NoMpsTest, RefusesSlicesAndRunsWholeGpus) {
  Start("");
  EXPECT_THAT(
      h_->daemon_log(),
      HasSubstr(" error MPS: cannot be started: /nonexistent/nvidia-cuda-mps-control is not "
                "executable; slices on mps devices are refused, whole GPUs still run."));
  CliResult slice = h_->Cli({"submit", "--gpu-mem", "4G", "--", "true"});
  EXPECT_EQ(slice.exit_code, 6) << slice.err;
  EXPECT_THAT(
      slice.err,
      HasSubstr("needs 4GiB of device memory on one device, and this node takes no slices: "
                "MPS cannot be started on this node (/nonexistent/nvidia-cuda-mps-control is "
                "not executable), so a slice's limits would not be enforced; ask for whole "
                "GPUs (--gpus N without --gpu-mem)"));
  CliResult whole = h_->Cli({"submit", "--wait", "--gpus", "1", "--", "true"});
  EXPECT_EQ(whole.exit_code, 0) << whole.err;
}

TEST_F(NoMpsTest, AllowUnenforcedSlicesRunsThem) {
  Start(R"(, "allow_unenforced_slices": true)");
  EXPECT_THAT(
      h_->daemon_log(),
      HasSubstr(" warning MPS: no control daemons: /nonexistent/nvidia-cuda-mps-control is not "
                "executable; slices get their MPS environment only, without enforced limits"));
  CliResult slice = h_->Cli({"submit", "--wait", "--gpu-mem", "4G", "--", "true"});
  EXPECT_EQ(slice.exit_code, 0) << slice.err;
}

}  // namespace
}  // namespace pinpoint::testing
