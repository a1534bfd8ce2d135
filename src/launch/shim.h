// The job supervisor (pinpoint-shim). Runs in its own session, holds the job directory's lock
// for its whole life, starts the job's program and records how it ended in exit.json.
#pragma once

#include <string>

#include "launch/launcher.h"
#include "pinpoint/status.h"

namespace pinpoint::launch {

// Files inside a job directory.
inline constexpr char kSpecFile[] = "spec.json";
inline constexpr char kLockFile[] = "lock";
inline constexpr char kExitFile[] = "exit.json";
inline constexpr char kStdoutFile[] = "stdout";
inline constexpr char kStderrFile[] = "stderr";
inline constexpr char kJobPidFile[] = "job.pid";  // the job's pid == its process group id

// The job's pid from job.pid, or 0 while the shim has not started it.
int64_t ReadJobPid(const std::string& job_dir);

// Writes `spec` to <job_dir>/spec.json (atomically; not fsynced: it only has to outlive
// pinpointd, not a power loss).
Status WriteSpec(const LaunchSpec& spec);
Result<LaunchSpec> ReadSpec(const std::string& job_dir);

// Writes/reads exit.json atomically (write to a temporary file, fsync, rename, fsync dir).
Status WriteExitStatus(const std::string& job_dir, const ExitStatus& status);
// Errors: kNotFound when there is no exit.json; kIo when it cannot be parsed.
Result<ExitStatus> ReadExitStatus(const std::string& job_dir);

// The shim's whole life: runs the job in `job_dir` while holding `lock_fd`, then writes
// exit.json. Returns the shim's process exit code. Called by pinpoint-shim's main only.
int RunShim(const std::string& job_dir, int lock_fd);

}  // namespace pinpoint::launch
