// The checkpoint API's use (issue 56 item 4): a job's processes are suspended all or none, and
// pinpoint-checkpoint runs it over the driver loaded at run time (here a stand-in libcuda,
// tests/fake_cuda, so the dlopen path runs without a GPU).
#include "gpu/cuda_checkpoint.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/process.h"
#include "common/spawn.h"
#include "common/test_dir.h"

namespace pinpoint::gpu {
namespace {

// Each process's state, and the calls made; a call for a pid in `refuse` fails.
class FakeCheckpointDriver : public CheckpointDriver {
 public:
  Status Lock(int pid, uint32_t) override { return Move("lock", pid, 0, 1); }
  Status Checkpoint(int pid) override { return Move("checkpoint", pid, 1, 2); }
  Status Restore(int pid) override { return Move("restore", pid, 2, 1); }
  Status Unlock(int pid) override { return Move("unlock", pid, 1, 0); }
  Result<CudaProcessState> State(int pid) override {
    return static_cast<CudaProcessState>(state_[pid]);
  }
  std::map<int, int> state_;
  std::set<std::pair<std::string, int>> refuse_;
  std::vector<std::string> calls_;

 private:
  Status Move(const std::string& call, int pid, int from, int to) {
    calls_.push_back(call + " " + std::to_string(pid));
    if (refuse_.count({call, pid})) return FailedPrecondition(call + " refused");
    if (state_[pid] != from) return FailedPrecondition(call + ": wrong state");
    state_[pid] = to;
    return Status::Ok();
  }
};

int64_t Zero() { return 0; }

TEST(SuspendAllTest, EveryProcessOrNone) {
  FakeCheckpointDriver driver;
  CheckpointReport done = SuspendAll(driver, {1, 2, 3}, 1000, Zero);
  EXPECT_TRUE(done.ok) << done.error;
  for (int pid : {1, 2, 3}) EXPECT_EQ(driver.state_[pid], 2) << pid;
  EXPECT_EQ(done.steps.at(2).state, CudaProcessState::kCheckpointed);
  EXPECT_EQ(driver.calls_, (std::vector<std::string>{"lock 1", "lock 2", "lock 3", "checkpoint 1",
                                                     "checkpoint 2", "checkpoint 3"}))
      << "each locked before any is checkpointed";
  CheckpointReport back = ResumeAll(driver, {1, 2, 3}, Zero);
  EXPECT_TRUE(back.ok) << back.error;
  for (int pid : {1, 2, 3}) EXPECT_EQ(driver.state_[pid], 0) << pid;
}

TEST(SuspendAllTest, ALockRefusedUnlocksTheOthers) {
  FakeCheckpointDriver driver;
  driver.refuse_.insert({"lock", 2});  // an MPS client
  CheckpointReport r = SuspendAll(driver, {1, 2, 3}, 1000, Zero);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "lock refused");
  for (int pid : {1, 2, 3}) EXPECT_EQ(driver.state_[pid], 0) << pid << ": running again";
  EXPECT_EQ(r.steps.at(1).error, "lock refused");
  EXPECT_EQ(r.steps.at(0).state, CudaProcessState::kRunning);
  EXPECT_EQ(r.steps.at(2).lock_ms, -1) << "never asked";
}

TEST(SuspendAllTest, ACheckpointThatFailsRestoresAndUnlocksTheOthers) {
  FakeCheckpointDriver driver;
  driver.refuse_.insert({"checkpoint", 3});
  CheckpointReport r = SuspendAll(driver, {1, 2, 3}, 1000, Zero);
  EXPECT_FALSE(r.ok);
  for (int pid : {1, 2, 3}) EXPECT_EQ(driver.state_[pid], 0) << pid << ": running again";
  EXPECT_EQ(driver.calls_.back(), "unlock 1") << "undone last first";
  nlohmann::json j = nlohmann::json::parse(ReportJson(r));
  EXPECT_FALSE(j["ok"].get<bool>());
  EXPECT_EQ(j["processes"][2]["error"], "checkpoint refused");
  EXPECT_EQ(j["processes"][0]["state"], "running");
}

TEST(ResumeAllTest, AProcessThatCannotBeRestoredIsSaidAndTheOthersGoOn) {
  FakeCheckpointDriver driver;
  ASSERT_TRUE(SuspendAll(driver, {1, 2}, 1000, Zero).ok);
  driver.refuse_.insert({"restore", 1});
  CheckpointReport r = ResumeAll(driver, {1, 2}, Zero);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.steps.at(0).state, CudaProcessState::kCheckpointed);
  EXPECT_EQ(driver.state_[2], 0);
}

TEST(ResumeAllTest, EachProcessGoesBackToRunningFromTheStateItIsIn) {
  FakeCheckpointDriver driver;
  driver.state_ = {{1, 2}, {2, 1}, {3, 0}};  // checkpointed, locked (a suspend cut short), running
  CheckpointReport r = ResumeAll(driver, {1, 2, 3}, Zero);
  EXPECT_TRUE(r.ok) << r.error;
  for (int pid : {1, 2, 3}) EXPECT_EQ(driver.state_[pid], 0) << pid;
  EXPECT_EQ(driver.calls_, (std::vector<std::string>{"restore 1", "unlock 1", "unlock 2"}))
      << "a running process is left as it is";
}

// ---- pinpoint-checkpoint over the stand-in libcuda ----

struct Ran {
  int status = -1;
  nlohmann::json out;
};

class CheckpointBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 2; ++i) {
      auto pid = Spawn({.argv = {"sleep", "600"}});
      ASSERT_TRUE(pid.ok()) << pid.status().ToString();
      sleepers_.push_back(*pid);
    }
  }
  void TearDown() override {
    for (pid_t pid : sleepers_) {
      ::kill(pid, SIGKILL);
      (void)WaitChild(pid, 10'000);
    }
  }
  Ran Run(std::vector<std::string> args, std::vector<std::string> env = {}) {
    std::vector<std::string> argv = {std::string(PINPOINT_BIN_DIR) + "/pinpoint-checkpoint"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> environment = {"FAKE_CUDA_STATE_DIR=" + dir_.path()};
    environment.insert(environment.end(), env.begin(), env.end());
    std::string out = dir_.path() + "/out.json";
    auto pid = Spawn({.argv = argv, .env = environment, .out = SpawnStream::File(out)});
    Ran ran;
    if (!pid.ok()) return ran;
    ran.status = WaitChild(*pid, 60'000).value_or(-1);
    std::ifstream in(out);
    std::stringstream text;
    text << in.rdbuf();
    ran.out = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    return ran;
  }
  int State(pid_t pid) {
    std::ifstream in(dir_.path() + "/" + std::to_string(pid));
    int state = 0;
    return in >> state ? state : 0;
  }
  std::string Pid(int i) { return std::to_string(sleepers_.at(static_cast<size_t>(i))); }
  TestDir dir_;
  std::vector<pid_t> sleepers_;
  const std::string lib_ = FAKE_CUDA_PATH;
};

TEST_F(CheckpointBinaryTest, SuspendsAndResumesAJobsProcessesThroughTheLoadedDriver) {
  Ran suspended = Run({"suspend", "--library", lib_, Pid(0), Pid(1)});
  ASSERT_TRUE(WIFEXITED(suspended.status)) << suspended.status;
  EXPECT_EQ(WEXITSTATUS(suspended.status), 0) << suspended.out.dump();
  EXPECT_TRUE(suspended.out.value("ok", false)) << suspended.out.dump();
  EXPECT_EQ(State(sleepers_[0]), 2);
  EXPECT_EQ(State(sleepers_[1]), 2);
  Ran state = Run({"state", "--library", lib_, Pid(1)});
  EXPECT_EQ(state.out["processes"][0]["state"], "checkpointed");
  Ran resumed = Run({"resume", "--library", lib_, Pid(0), Pid(1)});
  EXPECT_EQ(WEXITSTATUS(resumed.status), 0) << resumed.out.dump();
  EXPECT_EQ(State(sleepers_[0]), 0);
  EXPECT_EQ(State(sleepers_[1]), 0);
}

TEST_F(CheckpointBinaryTest, AProcessTheDriverRefusesLeavesTheJobAsItWas) {
  Ran r = Run({"suspend", "--library", lib_, Pid(0), Pid(1)}, {"FAKE_CUDA_REFUSE=" + Pid(1)});
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 1);
  EXPECT_NE(r.out.value("error", "").find("CUDA_ERROR_NOT_SUPPORTED (801)"), std::string::npos)
      << r.out.dump();
  EXPECT_EQ(State(sleepers_[0]), 0) << "unlocked again: not half-suspended";
  EXPECT_EQ(State(sleepers_[1]), 0);
}

TEST_F(CheckpointBinaryTest, CudaOnlyLeavesOutTheProcessesWithoutCudaAndFailsWhenNoneIsLeft) {
  Ran r = Run({"suspend", "--cuda-only", "--library", lib_, Pid(0), Pid(1)},
              {"FAKE_CUDA_NOT_CUDA=" + Pid(0)});
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 0) << r.out.dump();
  ASSERT_EQ(r.out["processes"].size(), 1u) << r.out.dump();
  EXPECT_EQ(r.out["processes"][0]["pid"], sleepers_[1]);
  EXPECT_EQ(State(sleepers_[1]), 2);
  Ran none =
      Run({"suspend", "--cuda-only", "--library", lib_, Pid(0)}, {"FAKE_CUDA_NOT_CUDA=" + Pid(0)});
  EXPECT_EQ(WEXITSTATUS(none.status), 1);
  EXPECT_NE(none.out.value("error", "").find("holds a CUDA context"), std::string::npos)
      << none.out.dump();
}

TEST_F(CheckpointBinaryTest, APidReusedOrWithoutTheDriverIsRefusedBeforeAnyCall) {
  auto stat = ReadProcStat(sleepers_[0]);
  auto other = ReadProcStat(sleepers_[1]);
  ASSERT_TRUE(stat.has_value() && other.has_value());
  std::string named = Pid(0) + ":" + std::to_string(stat->start_ticks);
  // Not the first sleeper's start + 1: the second may well have started one tick later (the
  // fresh-clone CI's failure under ASan).
  std::string stale = Pid(1) + ":" + std::to_string(other->start_ticks + 1);
  Ran reused = Run({"suspend", "--library", lib_, named, stale});
  EXPECT_EQ(WEXITSTATUS(reused.status), 1);
  EXPECT_NE(reused.out.value("error", "").find("its pid was reused"), std::string::npos)
      << reused.out.dump();
  EXPECT_EQ(State(sleepers_[0]), 0) << "no call made";
  Ran none = Run({"suspend", "--library", dir_.path() + "/no-libcuda.so", Pid(0)});
  EXPECT_EQ(WEXITSTATUS(none.status), 3);
  EXPECT_NE(none.out.value("error", "").find("cannot load"), std::string::npos);
  Ran usage = Run({"suspend", "--library", lib_, "12x"});
  EXPECT_EQ(WEXITSTATUS(usage.status), 2);
}

}  // namespace
}  // namespace pinpoint::gpu
