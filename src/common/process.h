// Reading /proc and preparing exec arguments: the few process facts the launcher and the MPS
// code need, in one place.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace pinpoint {

// Fields of /proc/<pid>/stat that pinpoint uses.
struct ProcStat {
  char state = '?';         // 'R', 'S', 'Z', ...
  int64_t ppid = 0;
  int64_t pgrp = 0;
  int64_t session = 0;
  uint64_t start_ticks = 0;  // field 22: start time in clock ticks since boot
};

// nullopt when the process does not exist (or /proc cannot be read).
std::optional<ProcStat> ReadProcStat(int64_t pid);
// True when `pid` exists and is not a zombie.
bool ProcessAlive(int64_t pid);
// Every pid in /proc.
std::vector<int64_t> ListPids();
// /proc/<pid>/<name> whole ("cmdline", "environ"); empty when unreadable.
std::string ReadProcFile(int64_t pid, const char* name);

// Waits until `pid` (any process, child or not) has exited or timeout_ms passes; true when it
// exited. Uses a pidfd, so nothing polls in a loop (falls back to 10 ms steps on old kernels).
// A child is not reaped: call waitpid afterwards.
bool WaitForExit(int64_t pid, int timeout_ms);

// Sends `signal` to the process that has `pid` only while `belongs(pid)` holds for it: the
// process is pinned with a pidfd before `belongs` looks at /proc, so a pid reused between the
// check and the signal is never hit. Returns true when the signal was sent; false when the
// process is gone, does not belong, or the signal failed. Kernels without pidfd (before 5.3)
// fall back to kill() after the check.
bool SignalIfBelongs(int64_t pid, int signal, const std::function<bool(int64_t)>& belongs);

// NULL-terminated char* views of `strings` for exec*(); valid while `strings` lives.
std::vector<char*> CStrings(const std::vector<std::string>& strings);

}  // namespace pinpoint
