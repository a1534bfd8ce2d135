#include "cli/submit_sched.h"

#include <algorithm>
#include <tuple>

#include "cli/job_arrays.h"
#include "pinpoint/escape.h"
#include "pinpoint/time_limit.h"

namespace pinpoint::cli {

Result<std::vector<JobId>> ParseJobIdList(const std::string& text, const std::string& flag) {
  std::vector<JobId> ids;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = std::min(text.find(',', start), text.size());
    std::string item = text.substr(start, comma - start);
    if (!IsJobId(item))
      return InvalidArgument(flag + ": '" + EscapeForTerminal(item) + "' is not a job id (job ids are whole numbers from 1)");
    ids.push_back(std::stoll(item));
    start = comma + 1;
  }
  return ids;
}

Status ApplySubmitSched(const SubmitSchedArgs& args, JobRequest* request) {
  if (!args.time.empty()) {
    auto seconds = ParseTimeLimit(args.time);
    if (!seconds.ok()) return InvalidArgument("--time: " + seconds.status().message());
    if (*seconds == 0) return InvalidArgument("--time must be more than 0; leave it out for the node's default");
    request->time_limit_s = *seconds;
  }
  for (auto [text, flag, out] : {std::tuple{&args.after, "--after", &request->after},
                                 std::tuple{&args.afterok, "--afterok", &request->afterok}}) {
    if (text->empty()) continue;
    auto ids = ParseJobIdList(*text, flag);
    if (!ids.ok()) return ids.status();
    *out = std::move(ids).value();
  }
  return Status::Ok();
}

}  // namespace pinpoint::cli
