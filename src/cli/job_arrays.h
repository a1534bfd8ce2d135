// Job arrays on the command line (docs/cli.md "Job arrays: --array"): a task named as Slurm
// names it (12_3), `submit --array` and its --wait, and `wait` on an array's id.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "pinpoint/api.h"
#include "pinpoint/client.h"
#include "pinpoint/status.h"

namespace pinpoint::cli {

// A job id as typed: 1 to 18 decimal digits, not all zeros.
bool IsJobId(const std::string& text);

// A job, or tasks of a job array, as Slurm names them: "12" (a job, or the array of that id),
// "12_3" (task 3 of array 12), "12_[1-3,7]" (those tasks: --array's syntax, without %K).
struct JobSelector {
  JobId id = 0;
  std::vector<int> indices;  // ascending; empty: `id` itself
};
// Pure. nullopt unless a job id (a whole number from 1, at most 18 digits), optionally followed
// by '_' and a task index (0 to kMaxArrayIndex) or a bracketed list of them.
std::optional<JobSelector> ParseJobSelector(const std::string& text);

// The job ids of tasks `indices` of array `array_id`, in order: one "show" of the array, then
// arithmetic for a plain range, else FindArrayTask's bisection for each. Errors: FindArrayTask's.
Result<std::vector<JobId>> ArrayTaskIds(Client& client, JobId array_id,
                                        const std::vector<int>& indices);

// What cancel, hold and release send for typed selectors: tasks as their own job ids in `ids`,
// a plain id in `arrays` (the daemon takes an array's id as every task, any other as that job).
struct SelectedJobs {
  std::vector<JobId> ids;
  std::vector<JobId> arrays;
  std::map<JobId, std::string> task_names;  // a task typed as ARRAY_INDEX: "4_20", by its job id
};
// Errors: kInvalidArgument (not a selector, one line), ArrayTaskIds's.
Result<SelectedJobs> SelectJobs(Client& client, const std::vector<std::string>& typed);
// What show, logs and wait take: tasks as their job ids, a plain id as itself. Errors:
// SelectJobs's.
Result<std::vector<JobId>> SelectJobIds(Client& client, const std::vector<std::string>& typed);

// The job id of the task with `index` in array `array_id`. Tasks have consecutive ids in index
// order, so it is found from the array's first task by arithmetic for a plain range, else by a
// binary search over the tasks' ids: at most about 14 "show" requests for 10000 tasks.
// Errors: kNotFound ("job 12 is not a job array", "array 12 has no task 3"), the client's.
Result<JobId> FindArrayTask(Client& client, JobId array_id, int index);

// Waits for `ids`: one job with "id" (its full record), several with "ids", one request per
// kWaitMaxIds of them (records without environments). In the order given. Errors: the client's.
Result<std::vector<JobView>> WaitForJobs(Client& client, const std::vector<JobId>& ids);
// The job ids of an array's tasks from position `from` on: array_id + from .. array_id + count - 1.
std::vector<JobId> ArrayJobIds(JobId array_id, int count, int from = 0);

// `pinpoint wait IDS`: each job's end, one line each ("job 7 completed (exit code 0)",
// FormatJobEnd); for a job array's id, the end of every one of its tasks and FormatArrayEnd's
// lines. `json`: an array of every job and task as it ended. Returns 0 when all completed, else 1.
// `typed`: selectors (SelectJobs): a plain id as above, tasks (12_3, 12_[1-3]) each as a job.
Result<int> RunWait(const std::string& socket, const std::vector<std::string>& typed, bool json,
                    std::ostream& out);

// What `pinpoint submit --array` prints once the daemon stored the array: "submitted array 12
// (4 tasks: jobs 12 to 15)", or with --json the reply. With `wait`, then waits for every task
// (Ctrl-C cancels the array; submit_wait.h), prints FormatArrayEnd's lines (--json: the tasks)
// and returns SubmitWaitExitCode.
Result<int> FinishArraySubmit(const std::string& socket, const SubmitReply& reply, bool wait,
                              bool held, bool json, std::ostream& out, std::ostream& err);

}  // namespace pinpoint::cli
