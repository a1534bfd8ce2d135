// `pinpoint submit`'s scheduling options: --time, --after, --afterok (docs/cli.md "submit").
#pragma once

#include <string>
#include <vector>

#include "pinpoint/job.h"
#include "pinpoint/status.h"

namespace pinpoint::cli {

struct SubmitSchedArgs {
  std::string time;     // --time LIMIT; "" = not given
  std::string after;    // --after ID[,ID...]
  std::string afterok;  // --afterok ID[,ID...]
};

// "3" or "3,4,17": job ids (whole numbers from 1). Errors: kInvalidArgument naming `flag` and the
// item: "--after: 'abc' is not a job id (job ids are whole numbers from 1)".
Result<std::vector<JobId>> ParseJobIdList(const std::string& text, const std::string& flag);

// Sets the request's time_limit_s, after and afterok from what was given. Errors:
// kInvalidArgument naming the option: a time limit ParseTimeLimit refuses, or 0 ("--time must
// be more than 0; leave it out for the node's default"), or a bad id list.
Status ApplySubmitSched(const SubmitSchedArgs& args, JobRequest* request);

}  // namespace pinpoint::cli
