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

Status ApplyDependency(const std::string& text, std::vector<JobId>* after, std::vector<JobId>* afterok) {
  const std::string flag = "--dependency";
  if (text.find('?') != std::string::npos)
    return InvalidArgument(flag + ": '?' (any one of them) is not supported here: every dependency must be met");
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = std::min(text.find(',', start), text.size());
    std::string item = text.substr(start, comma - start);
    start = comma + 1;
    size_t colon = item.find(':');
    std::string kind = item.substr(0, colon);
    std::vector<JobId>* into = kind == "afterok" ? afterok : kind == "afterany" ? after : nullptr;
    if (kind == "after")
      return InvalidArgument(flag + ": after (start once they have started) is not supported here; afterany waits "
                                    "for them to end (--after), afterok for them to complete (--afterok)");
    if (into == nullptr)
      return InvalidArgument(flag + ": '" + EscapeForTerminal(kind) + "' is not supported here; afterok:ID[:ID...] "
                                    "(--afterok) and afterany:ID[:ID...] (--after) are");
    if (colon == std::string::npos || colon + 1 == item.size())
      return InvalidArgument(flag + ": " + kind + " needs job ids (" + kind + ":ID[:ID...])");
    std::string ids = item.substr(colon + 1);
    std::replace(ids.begin(), ids.end(), ':', ',');
    auto parsed = ParseJobIdList(ids, flag);
    if (!parsed.ok()) return parsed.status();
    into->insert(into->end(), parsed->begin(), parsed->end());
  }
  return Status::Ok();
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
  if (!args.dependency.empty()) return ApplyDependency(args.dependency, &request->after, &request->afterok);
  return Status::Ok();
}

}  // namespace pinpoint::cli
