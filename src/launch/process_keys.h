// ProcessKeys: which job keys (PINPOINT_JOB_KEY entries, job_identity.h) the node's processes
// carry, each process's environment read once in its life and within a time budget per pass.
// Internal to launch/.
//
// Why: on a node without cgroups, a job's end looks for its processes by their key, which means
// reading the environment of every process of the job's user. A user decides how many processes
// they have and how large their environments are (up to kMaxEnvironBytes each): 300 processes of
// 1 MiB cost the loop seconds when each ending job read them all again. Here a process's keys are
// read once (kept by pid and start time, so a reused pid is a new process), every job of every
// pass shares that read, and a pass reads at most a time budget's worth, per user and in all; what
// is left is read by the next passes.
//
// A process's environment is laid out at its exec; one that changes it later (an exec with
// another environment, or writing over its own) is known by what it carried when first read: one
// that carried a job's key stays the job's, one that did not stays not. A process read while
// inside an exec reads empty (ProcessBetweenPrograms): that answer is not kept.
//
// Not thread-safe: the launcher's caller (the daemon's main loop) owns it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace pinpoint::launch {

class ProcessKeys {
 public:
  // How much of a pass reading environments may take: in all, and for the processes of one user
  // (the rest waits for the next pass). A user refused in one pass is read first in the next,
  // beyond the pass's budget but within their own, so that no user's reads starve another's.
  static constexpr int64_t kPassBudgetUs = 20'000;
  static constexpr int64_t kUserBudgetUs = 10'000;
  // The keys kept of one process: a job's process carries one; more are a user's invention.
  static constexpr size_t kMaxKeysPerProcess = 4;

  // Reads a process's environment (NUL-separated, bounded); the real one reads /proc.
  using Reader = std::function<std::string(int64_t pid)>;
  // Microseconds of a monotonic clock; the real one is steady_clock.
  using MicroClock = std::function<int64_t()>;
  ProcessKeys();
  ProcessKeys(Reader reader, MicroClock clock);

  enum class Answer {
    kHolds,    // the process carries the key
    kLacks,    // it does not
    kEmpty,    // its environment read empty (it may be inside an exec): asked again next time
    kNotRead,  // the budget of this pass is spent: not known yet, asked again next pass
  };
  // Whether the process `pid` (started at `start_ticks`, of user `uid`) carries `key_entry`
  // ("PINPOINT_JOB_KEY=<key>").
  Answer Check(int64_t pid, uint64_t start_ticks, uint32_t uid, const std::string& key_entry);
  // The same from what was read already, reading nothing: kNotRead when the process was not.
  Answer Known(int64_t pid, uint64_t start_ticks, const std::string& key_entry) const;

  // A new pass: its budget starts again.
  void NewPass();
  // Forgets every process but those in `alive` (pid -> start ticks): the node's processes now.
  void Retain(const std::map<int64_t, uint64_t>& alive);
  // Whether this pass refused a read: some answer is not known yet.
  bool Refused() const { return !refused_now_.empty(); }
  size_t size() const { return keys_.size(); }
  int64_t reads() const { return reads_; }  // environments read so far

 private:
  bool Allows(uint32_t uid) const;

  Reader reader_;
  MicroClock clock_;
  struct Entry {
    uint64_t start_ticks = 0;
    std::vector<std::string> keys;  // its "PINPOINT_JOB_KEY=..." entries
  };
  std::map<int64_t, Entry> keys_;
  int64_t pass_spent_us_ = 0;
  int64_t reads_ = 0;
  std::map<uint32_t, int64_t> user_spent_us_;
  std::set<uint32_t> refused_last_;  // users refused a read by the last pass
  std::set<uint32_t> refused_now_;
};

}  // namespace pinpoint::launch
