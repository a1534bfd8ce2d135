// `pinpoint submit --wait`: waits for the job it submitted as srun does. SIGINT or SIGTERM
// cancels the job (the daemon's "cancel" op) and keeps waiting for it to end; a second one
// leaves at once, the job still being cancelled (docs/cli.md "submit --wait").
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "pinpoint/api.h"
#include "pinpoint/status.h"

namespace pinpoint::cli {

// What became of the wait.
struct WaitOutcome {
  std::optional<JobView> job;  // the job as it ended; nullopt when left before its end
  std::vector<JobView> tasks;  // an array's wait: every task as it ended; empty when left before
  int signal = 0;              // the first SIGINT/SIGTERM that came, or 0
};

// Waits for job `id` through `socket`, blocking SIGINT and SIGTERM meanwhile (reading them
// through a signalfd; the mask is restored before it returns). Lines for people go to `err`,
// `first_line` (when not empty) once the signals are blocked: a signal sent by someone who read
// it is never lost. Errors: the daemon's and the connection's (kUnavailable), as Client's.
Result<WaitOutcome> WaitCancellingOnSignal(const std::string& socket, JobId id, std::ostream& err,
                                           const std::string& first_line = "");
// The same for the `count` tasks of job array `array_id` (jobs array_id .. array_id + count - 1,
// waited for one after the other on one connection): a signal cancels the whole array (the
// "cancel" op with the array's id in `arrays`).
Result<WaitOutcome> WaitArrayCancellingOnSignal(const std::string& socket, JobId array_id,
                                                int count, std::ostream& err,
                                                const std::string& first_line = "");

// The exit code of `pinpoint submit --wait` for an outcome: 128 + the signal when one came and
// the job (an array: any task) was cancelled, or when it left before the end; else the job's exit
// code, or 1 when it ended without one (killed, failed to launch, cancelled by someone else).
// An array: 0 when every task completed, else the highest exit code of the tasks that did not
// complete (1 when none has one).
int SubmitWaitExitCode(const WaitOutcome& outcome);

}  // namespace pinpoint::cli
