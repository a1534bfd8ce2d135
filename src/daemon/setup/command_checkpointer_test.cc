// CommandCheckpointer: pinpoint-checkpoint run off the loop (here a stand-in script that prints
// what the real one would), its report read, and a run past its deadline killed and said to be
// cut short (the runner then undoes it).
#include "daemon/setup/command_checkpointer.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>

#include <fstream>

#include "common/test_dir.h"

namespace pinpoint::daemon {
namespace {

class CommandCheckpointerTest : public ::testing::Test {
 protected:
  // A stand-in pinpoint-checkpoint running `body` (sh); its arguments are written to args.
  std::string Script(const std::string& body) {
    std::string path = dir_.path() + "/pinpoint-checkpoint";
    std::ofstream(path) << "#!/bin/sh\necho \"$@\" > " << dir_.path() << "/args\n" << body << "\n";
    ::chmod(path.c_str(), 0755);
    return path;
  }
  // Polls until a run ends (each wait bounded: 60 s in all).
  std::vector<Checkpointer::Done> WaitDone(CommandCheckpointer& c, int64_t now_ms = 0) {
    for (int i = 0; i < 600; ++i) {
      std::vector<Checkpointer::Done> done = c.Poll(now_ms);
      if (!done.empty()) return done;
      std::vector<pollfd> fds;
      for (int fd : c.WaitFds()) fds.push_back({fd, POLLIN, 0});
      ::poll(fds.data(), fds.size(), 100);
    }
    return {};
  }
  std::string Args() {
    std::ifstream in(dir_.path() + "/args");
    std::string line;
    std::getline(in, line);
    return line;
  }
  TestDir dir_;
};

TEST_F(CommandCheckpointerTest, ASuspendNamesEachProcessAndReadsWhichWereCheckpointed) {
  CommandCheckpointer c(
      Script(R"(echo '{"ok":true,"error":"","processes":[{"pid":11,"state":"checkpointed"},)"
             R"({"pid":99,"state":"checkpointed"}]}')"),
      60'000);
  ASSERT_TRUE(c.Available().ok());
  ASSERT_TRUE(c.Begin(7, Checkpointer::Action::kSuspend, {{11, 5}, {12, 6}}, 0).ok());
  EXPECT_EQ(c.Begin(7, Checkpointer::Action::kResume, {{11, 5}}, 0).code(),
            Code::kFailedPrecondition)
      << "one run a job";
  auto done = WaitDone(c);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].ok) << done[0].error;
  EXPECT_EQ(done[0].job, 7);
  EXPECT_EQ(Args(), "suspend --cuda-only 11:5 12:6");
  ASSERT_EQ(done[0].processes.size(), 1u) << "12 had no CUDA; 99 was never named";
  EXPECT_EQ(done[0].processes[0], (Checkpointer::Target{11, 5}));
}

TEST_F(CommandCheckpointerTest, AFailureSaysWhyAndWhetherItWasUndone) {
  CommandCheckpointer refused(
      Script(
          R"x(echo '{"ok":false,"error":"lock 11: CUDA_ERROR_NOT_SUPPORTED (801)","processes":[]}'; exit 1)x"),
      60'000);
  ASSERT_TRUE(refused.Begin(7, Checkpointer::Action::kSuspend, {{11, 5}}, 0).ok());
  auto done = WaitDone(refused);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_FALSE(done[0].ok);
  EXPECT_TRUE(done[0].clean) << "its report says each process is as it was";
  EXPECT_NE(done[0].error.find("801"), std::string::npos) << done[0].error;

  CommandCheckpointer garbled(Script("printf 'Segmentation fault\\033[2J\\n'; exit 139"), 60'000);
  ASSERT_TRUE(garbled.Begin(8, Checkpointer::Action::kSuspend, {{11, 5}}, 0).ok());
  done = WaitDone(garbled);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_FALSE(done[0].ok);
  EXPECT_FALSE(done[0].clean) << "no report: the processes may be left locked";
  EXPECT_EQ(done[0].error.find('\033'), std::string::npos) << "escaped: " << done[0].error;
}

TEST_F(CommandCheckpointerTest, ARunPastItsDeadlineIsKilledAndCutShort) {
  CommandCheckpointer slow(Script("exec sleep 600"), 1'000);
  ASSERT_TRUE(slow.Begin(7, Checkpointer::Action::kResume, {{11, 5}}, 0).ok());
  auto done = WaitDone(slow, /*now_ms=*/2'000);  // past its deadline at once
  ASSERT_EQ(done.size(), 1u);
  EXPECT_FALSE(done[0].ok);
  EXPECT_FALSE(done[0].clean);
  EXPECT_NE(done[0].error.find("did not end within"), std::string::npos) << done[0].error;
  EXPECT_TRUE(slow.WaitFds().empty()) << "nothing left running";
}

TEST_F(CommandCheckpointerTest, WithoutTheProgramTheNodeCannotSuspend) {
  CommandCheckpointer none(dir_.path() + "/missing", 1'000);
  EXPECT_EQ(none.Available().code(), Code::kUnavailable);
  EXPECT_FALSE(none.Begin(7, Checkpointer::Action::kSuspend, {{11, 5}}, 0).ok());
  std::vector<Checkpointer::Target> many(CommandCheckpointer::kMaxProcesses + 1, {11, 5});
  CommandCheckpointer some(Script("true"), 1'000);
  EXPECT_EQ(some.Begin(7, Checkpointer::Action::kSuspend, many, 0).code(),
            Code::kFailedPrecondition)
      << "a job's suspend names a bounded number of processes";
}

}  // namespace
}  // namespace pinpoint::daemon
