#include "launch/process_keys.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace pinpoint::launch {
namespace {

using Answer = ProcessKeys::Answer;

// Environments by pid, a count of reads, and a clock that each read moves on by read_us.
struct FakeProc {
  std::map<int64_t, std::string> environs;
  std::map<int64_t, int> reads;
  int64_t now_us = 0;
  int64_t read_us = 1000;
  ProcessKeys Keys() {
    return ProcessKeys(
        [this](int64_t pid) {
          ++reads[pid];
          now_us += read_us;
          auto it = environs.find(pid);
          return it == environs.end() ? std::string() : it->second;
        },
        [this] { return now_us; });
  }
};

std::string Env(const std::string& key) {
  return std::string("PATH=/bin\0HOME=/root\0", 21) + "PINPOINT_JOB_KEY=" + key +
         std::string("\0BIG=x", 6);
}

TEST(ProcessKeysTest, AProcessIsReadOnceForEveryJobThatAsks) {
  FakeProc proc;
  proc.environs[10] = Env("aaa");
  ProcessKeys keys = proc.Keys();
  EXPECT_EQ(keys.Check(10, 5, 1000, "PINPOINT_JOB_KEY=aaa"), Answer::kHolds);
  for (int job = 0; job < 20; ++job)
    EXPECT_EQ(keys.Check(10, 5, 1000, "PINPOINT_JOB_KEY=b" + std::to_string(job)), Answer::kLacks);
  keys.NewPass();
  EXPECT_EQ(keys.Check(10, 5, 1000, "PINPOINT_JOB_KEY=aaa"), Answer::kHolds);
  EXPECT_EQ(proc.reads[10], 1);
  EXPECT_EQ(keys.reads(), 1);
}

TEST(ProcessKeysTest, AReusedPidIsANewProcess) {
  FakeProc proc;
  proc.environs[10] = Env("aaa");
  ProcessKeys keys = proc.Keys();
  EXPECT_EQ(keys.Check(10, 5, 1000, "PINPOINT_JOB_KEY=aaa"), Answer::kHolds);
  proc.environs[10] = Env("zzz");
  EXPECT_EQ(keys.Known(10, 6, "PINPOINT_JOB_KEY=aaa"), Answer::kNotRead);
  EXPECT_EQ(keys.Check(10, 6, 1000, "PINPOINT_JOB_KEY=aaa"), Answer::kLacks);
  EXPECT_EQ(keys.Check(10, 6, 1000, "PINPOINT_JOB_KEY=zzz"), Answer::kHolds);
  EXPECT_EQ(proc.reads[10], 2);
}

TEST(ProcessKeysTest, AnEmptyEnvironmentIsNotKept) {
  // A process inside an exec reads empty: the next look reads it again.
  FakeProc proc;
  ProcessKeys keys = proc.Keys();
  EXPECT_EQ(keys.Check(10, 5, 1000, "PINPOINT_JOB_KEY=aaa"), Answer::kEmpty);
  proc.environs[10] = Env("aaa");
  EXPECT_EQ(keys.Check(10, 5, 1000, "PINPOINT_JOB_KEY=aaa"), Answer::kHolds);
  EXPECT_EQ(proc.reads[10], 2);
}

TEST(ProcessKeysTest, AKeyIsAWholeEntryNotAPrefix) {
  FakeProc proc;
  proc.environs[10] = Env("aaab");
  ProcessKeys keys = proc.Keys();
  EXPECT_EQ(keys.Check(10, 5, 1000, "PINPOINT_JOB_KEY=aaa"), Answer::kLacks);
  EXPECT_EQ(keys.Check(10, 5, 1000, "PINPOINT_JOB_KEY=aaab"), Answer::kHolds);
}

TEST(ProcessKeysTest, OnlyAFewKeysOfAProcessAreKept) {
  FakeProc proc;
  std::string many;
  for (int i = 0; i < 100; ++i) many += "PINPOINT_JOB_KEY=k" + std::to_string(i) + '\0';
  proc.environs[10] = many;
  ProcessKeys keys = proc.Keys();
  EXPECT_EQ(keys.Check(10, 5, 1000, "PINPOINT_JOB_KEY=k0"), Answer::kHolds);
  EXPECT_EQ(keys.Check(10, 5, 1000, "PINPOINT_JOB_KEY=k99"), Answer::kLacks);
}

TEST(ProcessKeysTest, APassReadsWithinItsBudgetAndTheNextGoesOn) {
  // 300 processes of one user whose environments take 1 ms each to read: one pass reads the
  // user's budget's worth, and the rest over the next passes, each process once.
  FakeProc proc;
  for (int64_t pid = 100; pid < 400; ++pid) proc.environs[pid] = Env("other");
  ProcessKeys keys = proc.Keys();
  int passes = 0;
  for (; passes < 100; ++passes) {
    keys.NewPass();
    int not_read = 0;
    for (int64_t pid = 100; pid < 400; ++pid)
      if (keys.Check(pid, 1, 1000, "PINPOINT_JOB_KEY=mine") == Answer::kNotRead) ++not_read;
    int64_t spent_us = proc.now_us;
    proc.now_us = 0;
    EXPECT_LE(spent_us, ProcessKeys::kUserBudgetUs + proc.read_us);
    if (not_read == 0) break;
    EXPECT_TRUE(keys.Refused());
  }
  EXPECT_EQ(passes + 1, 300 / (ProcessKeys::kUserBudgetUs / proc.read_us));
  EXPECT_EQ(keys.reads(), 300);
  EXPECT_FALSE(keys.Refused());
}

TEST(ProcessKeysTest, AUserRefusedInOnePassIsReadInTheNextWhateverOthersSpend) {
  // Users 1 and 2 spend the whole pass's budget before user 3 asks, in every pass: user 3, refused
  // once, is read in the next pass all the same.
  FakeProc proc;
  for (int64_t pid = 100; pid < 1000; ++pid) proc.environs[pid] = Env("other");
  proc.environs[5] = Env("three");
  ProcessKeys keys = proc.Keys();
  auto pass = [&](int64_t first) {
    keys.NewPass();
    for (int64_t pid = first; pid < first + 50; ++pid) (void)keys.Check(pid, 1, 1, "x");
    for (int64_t pid = first + 50; pid < first + 100; ++pid) (void)keys.Check(pid, 1, 2, "x");
    return keys.Check(5, 1, 3, "PINPOINT_JOB_KEY=three");
  };
  EXPECT_EQ(pass(100), Answer::kNotRead);
  EXPECT_EQ(pass(200), Answer::kHolds);
}

TEST(ProcessKeysTest, RetainForgetsTheProcessesGone) {
  FakeProc proc;
  proc.environs[10] = Env("aaa");
  proc.environs[11] = Env("bbb");
  ProcessKeys keys = proc.Keys();
  (void)keys.Check(10, 5, 1000, "x");
  (void)keys.Check(11, 7, 1000, "x");
  EXPECT_EQ(keys.size(), 2u);
  keys.Retain({{10, 5}, {11, 8}});  // 11 is another process now
  EXPECT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys.Known(10, 5, "PINPOINT_JOB_KEY=aaa"), Answer::kHolds);
  EXPECT_EQ(keys.Known(11, 7, "PINPOINT_JOB_KEY=bbb"), Answer::kNotRead);
}

}  // namespace
}  // namespace pinpoint::launch
