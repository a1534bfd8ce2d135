// Starting and waiting for the processes of a benchmark: workload copies, the pinpoint CLI,
// pinpointd and MPS control daemons. Linux only (pidfds, with a polling fallback).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "common/command_runner.h"
#include "pinpoint/status.h"

namespace pinpoint::bench {

// Unix epoch seconds, microsecond resolution: the one clock of every timestamp the driver takes
// (pinpointd's job times are epoch milliseconds, so they compare directly).
double NowSeconds();

// The driver's own environment as "KEY=VALUE" strings, without any CUDA_MPS_* variable, with
// `extra` added (replacing a variable of the same name).
std::vector<std::string> ChildEnvironment(const std::vector<std::string>& extra = {});

struct SpawnSpec {
  std::vector<std::string> argv;  // argv[0] is searched in the PATH of `env`
  std::vector<std::string> env;   // "KEY=VALUE"
  std::string stdout_path;        // empty: /dev/null
  std::string stderr_path;        // empty: /dev/null; may equal stdout_path
  int ready_fd = -1;              // the child's descriptor 3 (pinpointd --ready-fd 3); else none
};

// Starts spec's program with posix_spawn (common/spawn.h): stdin from /dev/null, output files
// appended to, its own process group, no descriptor but 0-2 (and 3). Errors: kNotFound when the
// program is not on the PATH; kIo naming it when it cannot be started or a file cannot be opened.
Result<pid_t> Spawn(const SpawnSpec& spec);

// Waits until every pid (children of this process) has exited, calling on_exit(i, status,
// NowSeconds()) as pid i is reaped. Returns early with kUnavailable ("interrupted") when *stop
// turns true (checked at least every 200 ms); the children left are not touched.
Status WaitAll(const std::vector<pid_t>& pids, const std::atomic<bool>* stop,
               const std::function<void(size_t, int, double)>& on_exit);

// Sends `sig` to the process group of each pid still running, then reaps them all (SIGKILL after
// grace_ms).
void KillAndReap(const std::vector<pid_t>& pids, int sig, int grace_ms);

// Spawns `spec` and appends its pid to *pids, one copy of a batch. When it cannot start, the
// batch is abandoned: every process in *pids is sent SIGTERM and reaped (KillAndReap, 5 s grace)
// and Spawn's error returned.
Status SpawnIntoBatch(const SpawnSpec& spec, std::vector<pid_t>* pids);

// What a command may print on each stream; the rest is dropped (out_truncated, err_truncated).
inline constexpr size_t kMaxCommandOutputBytes = 64 << 20;

// Runs a command to its end with `stdin_text` on its stdin, and collects its stdout and stderr
// (common/command_runner.h; exit_code is -1 when it was killed by a signal). Errors: kIo when it
// cannot be started; kUnavailable naming the command when it runs past timeout_ms (it is killed)
// or *stop turns true. A non-zero exit is not an error: see exit_code.
Result<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                 const std::vector<std::string>& env, int timeout_ms,
                                 const std::string& stdin_text = "",
                                 const std::atomic<bool>* stop = nullptr);

// The argv as one line for people and logs, quoting arguments that need it.
std::string ShellLine(const std::vector<std::string>& argv);

}  // namespace pinpoint::bench
