// `pinpoint submit`'s scheduling options: --time, --after, --afterok, Slurm's --dependency for
// the same, and --signal (docs/cli.md "submit").
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "pinpoint/job.h"
#include "pinpoint/status.h"

namespace pinpoint::cli {

struct SubmitSchedArgs {
  std::string time;        // --time LIMIT; "" = not given
  std::string after;       // --after ID[,ID...]
  std::string afterok;     // --afterok ID[,ID...]
  std::string dependency;  // --dependency afterok:ID[:ID...][,afterany:ID...] (Slurm's spelling)
  std::string signal;      // --signal [B:]SIG[@SECONDS]
};

// Slurm's --signal=[B:]SIG[@SECONDS]: SIG a number (1 to kMaxSignal) or a name with or without
// SIG (USR1, SIGUSR1, TERM...), SECONDS 0 to kMaxSignalBeforeS (default 60), B: the job's first
// process alone. Sets the request's signal fields. Errors: kInvalidArgument, one line naming
// --signal and what is wrong: an unknown signal, a bad time, Slurm's R: (requeue, not here).
Status ApplySignal(const std::string& text, JobRequest* request);

// "3" or "3,4,17": job ids (whole numbers from 1). Errors: kInvalidArgument naming `flag` and the
// item: "--after: 'abc' is not a job id (job ids are whole numbers from 1)".
Result<std::vector<JobId>> ParseJobIdList(const std::string& text, const std::string& flag);

// Slurm's --dependency, as far as it means what --after and --afterok mean: comma-separated
// items KIND:ID[:ID...], where afterok adds to `afterok` and afterany to `after`. Errors:
// kInvalidArgument, one line naming what to use instead: Slurm's `after` (it waits for the
// start, not the end), afternotok, aftercorr, singleton, `?` (any one of), an id that is not a
// job id, an empty item.
Status ApplyDependency(const std::string& text, std::vector<JobId>* after,
                       std::vector<JobId>* afterok);

// Sets the request's time_limit_s, after and afterok from what was given (--dependency's ids
// after --after's and --afterok's), and the signal (ApplySignal). Errors: kInvalidArgument
// naming the option: a time limit
// ParseTimeLimit refuses, or 0 ("--time must be more than 0; leave it out for the node's
// default"), or a bad id list or dependency.
Status ApplySubmitSched(const SubmitSchedArgs& args, JobRequest* request);

// The job id of task `index` of array `array_id` (FindArrayTask, through the daemon).
using TaskResolver = std::function<Result<JobId>(JobId array_id, int index)>;

// Slurm names an array task as a dependency (--afterok 12_2, --dependency afterok:12_2): each
// such word of --after, --afterok and --dependency becomes that task's job id, by `resolve`,
// asked only when a word names a task, for at most kMaxDependencies of them (more: refused before
// any is asked). Errors: resolve's, its line prefixed with the option and the word ("--afterok
// 12_9: array 12 has no task 9"); kInvalidArgument for too many.
Status ResolveTaskDependencies(SubmitSchedArgs* args, const TaskResolver& resolve);

}  // namespace pinpoint::cli
