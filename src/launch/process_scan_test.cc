// ProcessScan: a look at the node's processes that spends at most a budget a pass and goes on
// in the next (issue 55: a user decides how many processes the node has, and so what a look at
// them all costs the loop).
#include "launch/process_scan.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <map>
#include <set>
#include <vector>

#include "common/process.h"
#include "common/spawn.h"

namespace pinpoint::launch {
namespace {

// A node's processes as a test sets them; each Next or Stat costs `cost_us` of the clock.
struct FakeNode {
  std::set<int64_t> pids;
  int64_t last_pid = 0;
  int64_t now_us = 0;
  int64_t cost_us = 1000;
  int resumes = 0;
};

class FakeSource : public ProcessScan::Source {
 public:
  explicit FakeSource(FakeNode* node) : node_(node) {}
  void Rewind() override {}
  std::optional<int64_t> Next(int64_t after, bool resume) override {
    if (resume) ++node_->resumes;
    node_->now_us += node_->cost_us;
    auto it = node_->pids.upper_bound(after);
    if (it == node_->pids.end()) return std::nullopt;
    return *it;
  }
  std::optional<ProcStat> Stat(int64_t pid, uint32_t* owner) override {
    if (!node_->pids.count(pid)) return std::nullopt;
    *owner = 1000;
    ProcStat s;
    s.state = 'S';
    s.start_ticks = static_cast<uint64_t>(pid);
    return s;
  }
  int64_t LastPid() override { return node_->last_pid; }

 private:
  FakeNode* node_;
};

ProcessScan ScanOf(FakeNode* node) {
  return ProcessScan(std::make_unique<FakeSource>(node), [node] { return node->now_us; });
}

std::set<int64_t> PidsOf(ProcessScan& scan) {
  std::set<int64_t> out;
  for (const ProcessScan::Entry& e : scan.entries()) out.insert(e.pid);
  return out;
}

// Attack: a user with thousands of processes. One look at them all took the loop tens of ms per
// pass, more with more processes. Now a pass reads at most its budget's worth (here 10 of 1000 µs
// each) and the round goes on in the next, listing afresh from where it stopped.
TEST(ProcessScanTest, ARoundOfManyProcessesSpansPassesAtABudgetEach) {
  FakeNode node;
  for (int64_t pid = 1; pid <= 100; ++pid) node.pids.insert(pid);
  ProcessScan scan = ScanOf(&node);
  int passes = 0;
  for (; passes < 100; ++passes) {
    scan.NewPass();
    int64_t before = node.now_us;
    bool done = scan.Advance();
    // The budget is checked before each read: a pass overruns it by one read at most.
    EXPECT_LE(node.now_us - before, ProcessScan::kListingBudgetUs + node.cost_us);
    EXPECT_EQ(scan.Advance(), done) << "a second call in the same pass reads nothing more";
    if (done) break;
    EXPECT_TRUE(scan.Refused()) << "the pass stopped the round: the next pass is due at once";
  }
  EXPECT_GE(passes, 100 / (ProcessScan::kListingBudgetUs / node.cost_us + 1));
  EXPECT_TRUE(scan.complete());
  EXPECT_EQ(PidsOf(scan).size(), 100u);
  EXPECT_EQ(scan.rounds(), 1);
  EXPECT_GE(node.resumes, passes - 1) << "each pass lists afresh from where the last stopped";
}

TEST(ProcessScanTest, AProcessStartedDuringTheRoundAboveWhereItIsIsRead) {
  FakeNode node;
  for (int64_t pid = 100; pid < 150; ++pid) node.pids.insert(pid);
  node.last_pid = 149;
  ProcessScan scan = ScanOf(&node);
  scan.NewPass();
  EXPECT_FALSE(scan.Advance());
  node.pids.insert(151);  // forked by a process the round has not reached, or has
  node.last_pid = 151;
  node.pids.erase(140);  // and one ended before the round came to it
  while (!scan.complete()) {
    scan.NewPass();
    scan.Advance();
  }
  std::set<int64_t> seen = PidsOf(scan);
  EXPECT_TRUE(seen.count(151));
  EXPECT_FALSE(seen.count(140));
  EXPECT_FALSE(scan.wrapped());
}

// Attack: after the pids wrapped once in the node's life, old processes hold pids above the last
// one given out, so a process a job starts (or one that forks and ends, hopping) gets a pid below
// where the listing already is, and the listing misses it. The round's tail looks at each pid
// given out since the round began.
TEST(ProcessScanTest, AProcessStartedBelowWhereTheListingIsIsReadByTheTail) {
  FakeNode node;
  for (int64_t pid = 100; pid < 150; ++pid) node.pids.insert(pid);
  for (int64_t pid = 20000; pid < 20050; ++pid) node.pids.insert(pid);  // old, from before a wrap
  node.last_pid = 149;
  ProcessScan scan = ScanOf(&node);
  scan.NewPass();
  while (!scan.complete() && scan.entries().size() < 60) {
    scan.NewPass();
    scan.Advance();
  }
  ASSERT_FALSE(scan.complete());
  node.pids.insert(150);  // below where the listing is now
  node.pids.erase(140);   // its parent, ended: nothing else of the job is left to find
  node.pids.insert(152);
  node.last_pid = 152;
  while (!scan.complete()) {
    scan.NewPass();
    scan.Advance();
  }
  std::set<int64_t> seen = PidsOf(scan);
  EXPECT_TRUE(seen.count(150)) << "the process started below the listing was missed";
  EXPECT_TRUE(seen.count(152));
  EXPECT_FALSE(scan.wrapped());
}

// Attack: a process forks until the pids wrap around, so that its child lands below where the
// round is, and ends: the round would miss the child. The last pid given out went down during
// the round: it is marked, and what it says of a job's absence is not trusted (the launcher).
TEST(ProcessScanTest, ARoundDuringWhichThePidsWrappedSaysSo) {
  FakeNode node;
  for (int64_t pid = 100; pid < 150; ++pid) node.pids.insert(pid);
  node.last_pid = 30000;
  ProcessScan scan = ScanOf(&node);
  scan.NewPass();
  EXPECT_FALSE(scan.Advance());
  node.pids.insert(50);  // below where the round is: missed
  node.last_pid = 50;
  while (!scan.complete()) {
    scan.NewPass();
    scan.Advance();
  }
  EXPECT_FALSE(PidsOf(scan).count(50));
  EXPECT_TRUE(scan.wrapped());
  scan.NewPass();  // a new round, without the mark
  while (!scan.Advance()) scan.NewPass();
  EXPECT_FALSE(scan.wrapped());
  EXPECT_TRUE(PidsOf(scan).count(50));
}

TEST(ProcessScanTest, ACompleteRoundIsDroppedAtTheNextPassAndOnRestart) {
  FakeNode node;
  node.cost_us = 100;
  node.pids = {1, 2, 3};
  ProcessScan scan = ScanOf(&node);
  scan.NewPass();
  EXPECT_TRUE(scan.Advance());
  node.pids.insert(4);
  EXPECT_TRUE(scan.Advance());
  EXPECT_FALSE(PidsOf(scan).count(4)) << "within the pass, the complete round answers";
  scan.Restart();
  EXPECT_TRUE(scan.Advance());
  EXPECT_TRUE(PidsOf(scan).count(4));
  node.pids.insert(5);
  scan.NewPass();
  EXPECT_TRUE(scan.Advance());
  EXPECT_TRUE(PidsOf(scan).count(5));
  EXPECT_EQ(scan.rounds(), 3);
}

TEST(ProcessScanTest, ReadsPastTheBudgetAreRefusedUntilTheNextPass) {
  FakeNode node;
  ProcessScan scan = ScanOf(&node);
  scan.NewPass();
  int reads = 0;
  auto read = [&] {
    ++reads;
    node.now_us += 4000;
  };
  EXPECT_TRUE(scan.Spend(read));
  EXPECT_TRUE(scan.Spend(read));
  EXPECT_TRUE(scan.Spend(read));
  EXPECT_FALSE(scan.Spend(read));
  EXPECT_TRUE(scan.Refused());
  EXPECT_EQ(reads, 3);
  scan.NewPass();
  EXPECT_FALSE(scan.Refused());
  EXPECT_TRUE(scan.Spend(read));
}

// The real /proc, a few processes a pass (a clock that spends 3 ms a read): the round resumes in
// each pass where it stopped. Every process alive throughout is read once, and a process started
// in the middle of the round is read too.
TEST(ProcessScanTest, OnProcARoundResumedEachPassReadsEveryProcessAliveThroughout) {
  int64_t now_us = 0;
  ProcessScan scan([&now_us] { return now_us += 1500; });
  std::map<int64_t, uint64_t> before;  // pid -> start ticks
  for (int64_t pid : ListPids())
    if (auto stat = ReadProcStat(pid); stat && stat->state != 'Z') before[pid] = stat->start_ticks;
  scan.NewPass();
  EXPECT_FALSE(scan.Advance()) << "a pass reads only a few";
  SpawnSpec s;
  s.argv = {"sleep", "1000"};
  s.env = std::vector<std::string>{"PATH=/usr/bin:/bin"};
  auto child = Spawn(s);
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  int passes = 1;
  for (; passes < 100000 && !scan.complete(); ++passes) {
    scan.NewPass();
    scan.Advance();
  }
  std::set<int64_t> seen;
  for (const ProcessScan::Entry& e : scan.entries()) {
    EXPECT_TRUE(seen.insert(e.pid).second) << "pid " << e.pid << " read twice";
  }
  EXPECT_TRUE(scan.complete());
  EXPECT_GT(passes, 2);
  for (const auto& [pid, ticks] : before) {
    auto stat = ReadProcStat(pid);
    bool throughout = stat && stat->state != 'Z' && stat->start_ticks == ticks;
    if (throughout) {
      EXPECT_TRUE(seen.count(pid)) << "process " << pid << ", alive throughout, was not read";
    }
  }
  if (!scan.wrapped()) {
    EXPECT_TRUE(seen.count(*child)) << "a process started during the round was not read";
  }
  EXPECT_TRUE(seen.count(::getpid()));
  for (const ProcessScan::Entry& e : scan.entries())
    if (e.pid == ::getpid()) {
      EXPECT_EQ(e.owner, ::geteuid());
    }
  ::kill(static_cast<pid_t>(*child), SIGKILL);
  WaitChild(static_cast<pid_t>(*child), 120'000);
}

}  // namespace
}  // namespace pinpoint::launch
