// ProcessScan: the node's processes, read in pid order a time budget at a time: one look at every
// process (a round) may span passes. Internal to launch/.
//
// Why: on a node without cgroups an ending job's processes are found among the node's processes,
// and a user decides how many processes the node has. Reading each one's stat costs microseconds:
// 3,000 cost a pass some 20 ms, 30,000 a fifth of a second, on the loop every other user waits on.
// Here a pass reads at most kPassBudgetUs of them; the round goes on in the next pass, which
// follows at once (Launcher::MoreDue), and the requests waiting in between are served.
//
// Why a round spread over passes still finds a job's processes: it lists /proc in pid order,
// afresh from where it stopped in each pass, so every process alive throughout is read. A process
// started during the round gets a pid above the last one given out when the round began (the
// kernel hands them out upwards): once the listing ends, the round looks at each pid given out
// since (its tail), until none was given out since it last looked. So a complete round has read
// every process alive at its end: a job none of whose processes it read has none.
// Where that cannot be known it says so (`wrapped`: the pids wrapped around at pid_max during the
// round, or more were started during it than its tail follows), and what it says of a job's
// absence is not trusted.
//
// Not thread-safe: the launcher's caller (the daemon's main loop) owns it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/process.h"

namespace pinpoint::launch {

class ProcessScan {
 public:
  // What a pass may spend reading processes: their stat, and the ids of those a job asks about.
  // The round's listing stops at kListingBudgetUs, so the pass in which a round completes has
  // some left for the reads that round's answers need (Spend).
  static constexpr int64_t kPassBudgetUs = 10'000;
  static constexpr int64_t kListingBudgetUs = 6'000;
  // The most pids a round's tail looks at (those given out during the round): past it, processes
  // are started faster than the round follows them.
  static constexpr int64_t kMaxTailPids = 1 << 20;

  // The node's processes as a round lists them. The real one reads /proc.
  class Source {
   public:
    virtual ~Source() = default;
    // Starts listing from the lowest pid.
    virtual void Rewind() = 0;
    // The next pid in ascending order, listed afresh after `after` (the last one taken) when
    // `resume` (a new pass: what was listed before may be stale); nullopt at the end.
    virtual std::optional<int64_t> Next(int64_t after, bool resume) = 0;
    // The process's stat and the owner of its /proc entry; nullopt when it is gone.
    virtual std::optional<ProcStat> Stat(int64_t pid, uint32_t* owner) = 0;
    // The last pid the kernel gave out (/proc/loadavg); 0 when unknown.
    virtual int64_t LastPid() = 0;
  };
  // Microseconds of a monotonic clock; the real one is steady_clock.
  using MicroClock = std::function<int64_t()>;

  struct Entry {
    int64_t pid = 0;
    ProcStat stat;
    uint32_t owner = 0;  // the owner of /proc/<pid> (its effective uid, or root's: ReadProcStat)
    // Read when a job first asks, and kept for the round.
    std::optional<std::string> cgroup;
    std::optional<std::optional<ProcUids>> uids;
  };

  ProcessScan();                           // reads /proc
  explicit ProcessScan(MicroClock clock);  // reads /proc, its budget on `clock`
  ProcessScan(std::unique_ptr<Source> source, MicroClock clock);
  ~ProcessScan();
  ProcessScan(ProcessScan&&) noexcept;
  ProcessScan& operator=(ProcessScan&&) noexcept;

  // Goes on with the round (starting one if none is under way) within what is left of this
  // pass's budget; true when the round is complete.
  bool Advance();
  // The processes the round has read so far (all of them once it is complete), not zombies.
  std::vector<Entry>& entries() { return entries_; }
  bool complete() const { return complete_; }
  // Whether the round may have missed a process: the pids wrapped around during it, or its tail
  // gave up (kMaxTailPids).
  bool wrapped() const { return wrapped_; }
  // The round is over: the next Advance starts another.
  void Restart();
  // Spends budget on `read` when some is left (true), or refuses it (false: asked again later).
  bool Spend(const std::function<void()>& read);
  // A new pass: its budget starts again; a complete round is dropped (the next one sees the
  // processes started since), one under way goes on.
  void NewPass();
  // Whether this pass stopped a round under way, or refused a read, for want of budget.
  bool Refused() const { return refused_; }
  // Rounds completed so far (tests).
  int64_t rounds() const { return rounds_; }

 private:
  // Notes a wrap of the pids since the last look (the last pid given out went down).
  void SeeWrap();

  std::unique_ptr<Source> source_;
  MicroClock clock_;
  std::vector<Entry> entries_;
  // One step of the round: the next pid listed, or of its tail. False when there is none.
  bool Step();
  void Take(int64_t pid);

  bool started_ = false;   // a round is under way or complete
  bool complete_ = false;  // it listed its last pid and followed its tail
  bool wrapped_ = false;
  bool in_tail_ = false;         // the listing is over: the pids given out since the round began
  int64_t round_first_pid_ = 0;  // the last pid given out when the round began
  int64_t tail_next_ = 0;        // the next pid of the tail to look at
  int64_t tail_end_ = 0;         // the last pid given out when the tail last looked
  int64_t tail_looked_ = 0;
  std::set<int64_t> taken_;  // the pids the round has looked at
  bool resume_ = false;      // the listing goes on from an earlier pass
  int64_t last_taken_ = 0;
  int64_t last_pid_ = 0;
  int64_t spent_us_ = 0;
  bool refused_ = false;
  int64_t rounds_ = 0;
};

}  // namespace pinpoint::launch
