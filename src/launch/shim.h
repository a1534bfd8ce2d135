// The job supervisor (pinpoint-shim). Runs in its own session, holds the job directory's lock
// for its whole life, starts the job's program and records how it ended in exit.json.
//
// Every file of the job directory is reached through a descriptor of the directory, without
// following links (launcher.h says why); the `dir_fd` arguments below are such a descriptor
// (common/file_util.h OpenDirNoFollow).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/file_util.h"
#include "launch/launcher.h"
#include "pinpoint/status.h"

namespace pinpoint::launch {

// Files inside a job directory.
inline constexpr char kSpecFile[] = "spec.json";
inline constexpr char kLockFile[] = "lock";
inline constexpr char kExitFile[] = "exit.json";
inline constexpr char kExitSlotFile[] = "exit.slot";  // preallocated; see WriteExitSlot
inline constexpr char kStdoutFile[] = "stdout";
inline constexpr char kStderrFile[] = "stderr";
inline constexpr char kJobPidFile[] = "job.pid";  // the job's pid == its process group id

// Bounds on what is read back from a job directory.
inline constexpr uint64_t kMaxSpecBytes = 64ull << 20;
inline constexpr uint64_t kExitSlotBytes = 4096;  // also the bound on exit.json

// Opens a job directory for the shim or the launcher: no link in its last component, owned by
// this process's user and writable by nobody else. Errors: kNotFound; kIo (a link, another
// owner, group/other-writable) naming the directory.
Result<UniqueFd> OpenJobDir(const std::string& job_dir);

// Whether a process holds an OFD lock on `lock_path` (pinpointd holds one on its state
// directory's lock for its whole life; LaunchSpec::daemon_lock), asked without taking it: kFree
// also when the file does not exist; kUnknown when it cannot be opened or asked.
enum class DaemonLock { kHeld, kFree, kUnknown };
DaemonLock ProbeDaemonLock(const std::string& lock_path);

// The job's pid from job.pid, or 0 while the shim has not started it (or the file is unreadable).
int64_t ReadJobPid(int dir_fd);
int64_t ReadJobPid(const std::string& job_dir);

// Writes `spec` to spec.json (atomically; not fsynced: it only has to outlive pinpointd, not a
// power loss). Errors: kIo.
Status WriteSpec(int dir_fd, const LaunchSpec& spec);
// Errors: kNotFound; kIo (unreadable, larger than kMaxSpecBytes, or not a spec).
Result<LaunchSpec> ReadSpec(int dir_fd);

// Creates exit.slot: kExitSlotBytes of zeros, written (not fsynced), so that WriteExitSlot later
// overwrites blocks the file already has (on filesystems that rewrite in place; copy-on-write
// ones may still need new blocks). Errors: kIo (e.g. the disk is already full: the job is not
// started then).
Status CreateExitSlot(int dir_fd);

// Writes exit.json atomically and durably (temporary file, fsync, rename, fsync dir); a failed
// try leaves no partial file. Errors: kIo.
Status WriteExitStatus(int dir_fd, const ExitStatus& status);
// Records `status` in the preallocated exit.slot, in place, and fdatasyncs it; a long error text
// is shortened to fit. Errors: kNotFound when there is no slot; kIo.
Status WriteExitSlot(int dir_fd, const ExitStatus& status);
// exit.json, or else a status recorded in exit.slot. Errors: kNotFound when neither holds one;
// kIo when it cannot be read or parsed.
Result<ExitStatus> ReadExitStatus(int dir_fd);
Result<ExitStatus> ReadExitStatus(const std::string& job_dir);

// Calls `attempt` until it returns Ok, calling `sleep_ms` between tries with first_ms, then
// doubling, never more than max_ms. Never gives up: the shim holds the job's lock meanwhile, so
// the daemon sees the job as running and nothing is reported before it is recorded. Returns the
// number of failed tries.
int RetryUntilOk(const std::function<Status()>& attempt,
                 const std::function<void(int64_t)>& sleep_ms, int64_t first_ms = 100,
                 int64_t max_ms = 5000);

// Records `status` durably, whatever it takes: exit.json, else exit.slot, retried with
// RetryUntilOk; each failed try is reported on `log_fd`. Returns when it is recorded, or once
// the job directory has been removed (there is nowhere to record it then).
void RecordExitStatus(int dir_fd, const ExitStatus& status, int log_fd,
                      const std::function<void(int64_t)>& sleep_ms);

// The shim's whole life: runs the job in `job_dir` while holding `lock_fd`, then records how it
// ended. Returns the shim's process exit code. Called by pinpoint-shim's main only.
int RunShim(const std::string& job_dir, int lock_fd);

}  // namespace pinpoint::launch
