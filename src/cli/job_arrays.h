// Job arrays on the command line (docs/cli.md "Job arrays: --array"): a task named as Slurm
// names it (12_3), `submit --array` and its --wait, and `wait` on an array's id.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "pinpoint/api.h"
#include "pinpoint/client.h"
#include "pinpoint/status.h"

namespace pinpoint::cli {

// What `cancel` takes: "12" (a job, or the job array of that id) or "12_3" (task 3 of array 12).
struct JobOrTask {
  JobId id = 0;
  std::optional<int> index;
};
// Pure. nullopt unless a job id (a whole number from 1, at most 18 digits), optionally followed
// by '_' and a task index (0 to kMaxArrayIndex).
std::optional<JobOrTask> ParseJobOrTask(const std::string& text);

// The job id of the task with `index` in array `array_id`. Tasks have consecutive ids in index
// order, so it is found from the array's first task by arithmetic for a plain range, else by a
// binary search over the tasks' ids: at most about 14 "show" requests for 10000 tasks.
// Errors: kNotFound ("job 12 is not a job array", "array 12 has no task 3"), the client's.
Result<JobId> FindArrayTask(Client& client, JobId array_id, int index);

// The request of `pinpoint cancel` for typed ids: a task named ARRAY_INDEX is its own job id in
// `ids` (that task alone); a plain id goes to `arrays`, so that an array's id cancels its
// unfinished tasks and any other id its job. Errors: FindArrayTask's.
Result<CancelRequest> CancelRequestFor(Client& client, const std::vector<std::string>& typed);

// Waits for `ids`: one job with "id" (its full record), several with "ids", one request per
// kWaitMaxIds of them (records without environments). In the order given. Errors: the client's.
Result<std::vector<JobView>> WaitForJobs(Client& client, const std::vector<JobId>& ids);
// The job ids of an array's tasks from position `from` on: array_id + from .. array_id + count - 1.
std::vector<JobId> ArrayJobIds(JobId array_id, int count, int from = 0);

// `pinpoint wait IDS`: each job's end, one line each ("job 7 completed (exit-0)"); for a job
// array's id, the end of every one of its tasks and FormatArrayEnd's lines. `json`: an array of
// every job and task as it ended. Returns 0 when all completed, else 1.
Result<int> RunWait(const std::string& socket, const std::vector<int64_t>& ids, bool json, std::ostream& out);

// What `pinpoint submit --array` prints once the daemon stored the array: "submitted array 12
// (4 tasks: jobs 12 to 15)", or with --json the reply. With `wait`, then waits for every task
// (Ctrl-C cancels the array; submit_wait.h), prints FormatArrayEnd's lines (--json: the tasks)
// and returns SubmitWaitExitCode.
Result<int> FinishArraySubmit(const std::string& socket, const SubmitReply& reply, bool wait, bool held,
                              bool json, std::ostream& out, std::ostream& err);

}  // namespace pinpoint::cli
