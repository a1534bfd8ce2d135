#include "cli/submit_sched.h"

#include <signal.h>

#include <algorithm>
#include <tuple>
#include <utility>

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
      return InvalidArgument(flag + ": '" + EscapeForTerminal(item) +
                             "' is not a job id (job ids are whole numbers from 1)");
    ids.push_back(std::stoll(item));
    start = comma + 1;
  }
  return ids;
}

Status ApplyDependency(const std::string& text, std::vector<JobId>* after,
                       std::vector<JobId>* afterok) {
  const std::string flag = "--dependency";
  if (text.find('?') != std::string::npos)
    return InvalidArgument(
        flag + ": '?' (any one of them) is not supported here: every dependency must be met");
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = std::min(text.find(',', start), text.size());
    std::string item = text.substr(start, comma - start);
    start = comma + 1;
    size_t colon = item.find(':');
    std::string kind = item.substr(0, colon);
    std::vector<JobId>* into = kind == "afterok" ? afterok : kind == "afterany" ? after : nullptr;
    if (kind == "after")
      return InvalidArgument(
          flag +
          ": after (start once they have started) is not supported here; afterany waits "
          "for them to end (--after), afterok for them to complete (--afterok)");
    if (into == nullptr)
      return InvalidArgument(flag + ": '" + EscapeForTerminal(kind) +
                             "' is not supported here; afterok:ID[:ID...] "
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

namespace {

// The signals a job may ask for by name (signal(7)); others by number.
constexpr std::pair<const char*, int> kSignalNames[] = {
    {"HUP", SIGHUP},     {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"ABRT", SIGABRT}, {"KILL", SIGKILL},
    {"USR1", SIGUSR1},   {"USR2", SIGUSR2}, {"PIPE", SIGPIPE}, {"ALRM", SIGALRM}, {"TERM", SIGTERM},
    {"CONT", SIGCONT},   {"STOP", SIGSTOP}, {"TSTP", SIGTSTP}, {"URG", SIGURG},   {"XCPU", SIGXCPU},
    {"WINCH", SIGWINCH}, {"IO", SIGIO},     {"PWR", SIGPWR},   {"SYS", SIGSYS},
};

}  // namespace

Status ApplySignal(const std::string& text, JobRequest* request) {
  const std::string usage = "--signal: expected [B:]SIG[@SECONDS], e.g. USR1@120 or B:TERM@60";
  std::string rest = text;
  bool leader_only = false;
  if (rest.rfind("B:", 0) == 0) {
    leader_only = true;
    rest = rest.substr(2);
  } else if (rest.rfind("R:", 0) == 0 || rest.rfind("RB:", 0) == 0 || rest.rfind("BR:", 0) == 0) {
    return InvalidArgument(
        "--signal: R: (requeue the job when the signal is sent) is not supported here; "
        "use [B:]SIG[@SECONDS]");
  }
  std::string name = rest.substr(0, rest.find('@'));
  int64_t before_s = 60;  // Slurm's default
  if (size_t at = rest.find('@'); at != std::string::npos) {
    std::string seconds = rest.substr(at + 1);
    bool digits =
        !seconds.empty() && seconds.size() <= 5 &&
        std::all_of(seconds.begin(), seconds.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits || std::stoll(seconds) > kMaxSignalBeforeS)
      return InvalidArgument("--signal: '" + EscapeForTerminal(seconds) +
                             "' is not a time in seconds (0 to " +
                             std::to_string(kMaxSignalBeforeS) + ")");
    before_s = std::stoll(seconds);
  }
  int signal = 0;
  if (!name.empty() && name.size() <= 2 &&
      std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    signal = std::stoi(name);
  } else {
    std::string bare = name.rfind("SIG", 0) == 0 ? name.substr(3) : name;
    for (const auto& [known, number] : kSignalNames) {
      if (bare == known) signal = number;
    }
  }
  if (name.empty()) return InvalidArgument(usage);
  if (signal < 1 || signal > kMaxSignal)
    return InvalidArgument("--signal: '" + EscapeForTerminal(name) +
                           "' is not a signal (a name such as USR1 or TERM, "
                           "or a number from 1 to " +
                           std::to_string(kMaxSignal) + ")");
  request->signal = signal;
  request->signal_before_s = before_s;
  request->signal_leader_only = leader_only;
  return Status::Ok();
}

Status ApplySubmitSched(const SubmitSchedArgs& args, JobRequest* request) {
  if (!args.time.empty()) {
    auto seconds = ParseTimeLimit(args.time);
    if (!seconds.ok()) return InvalidArgument("--time: " + seconds.status().message());
    if (*seconds == 0)
      return InvalidArgument("--time must be more than 0; leave it out for the node's default");
    request->time_limit_s = *seconds;
  }
  for (auto [text, flag, out] : {std::tuple{&args.after, "--after", &request->after},
                                 std::tuple{&args.afterok, "--afterok", &request->afterok}}) {
    if (text->empty()) continue;
    auto ids = ParseJobIdList(*text, flag);
    if (!ids.ok()) return ids.status();
    *out = std::move(ids).value();
  }
  if (!args.signal.empty()) PP_RETURN_IF_ERROR(ApplySignal(args.signal, request));
  if (!args.dependency.empty())
    PP_RETURN_IF_ERROR(ApplyDependency(args.dependency, &request->after, &request->afterok));
  // A job named twice is one dependency (`--afterok 5,5`, or in --afterok and --dependency both).
  for (std::vector<JobId>* ids : {&request->after, &request->afterok}) {
    std::vector<JobId> once;
    for (JobId id : *ids)
      if (std::find(once.begin(), once.end(), id) == once.end()) once.push_back(id);
    *ids = std::move(once);
  }
  return Status::Ok();
}

namespace {

// `text` with each word (between ',' and ':') that names one array task replaced by its job id.
Status ResolveTasksIn(std::string& text, const char* flag, const TaskResolver& resolve) {
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = std::min(text.find_first_of(",:", start), text.size());
    std::string word = text.substr(start, end - start);
    auto selector = word.find('_') != std::string::npos ? ParseJobSelector(word) : std::nullopt;
    if (selector && selector->indices.size() == 1) {
      auto id = resolve(selector->id, selector->indices[0]);
      if (!id.ok())
        return Status(id.status().code(), std::string(flag) + " " + EscapeForTerminal(word) + ": " +
                                              id.status().message());
      word = std::to_string(*id);
    }
    out += word;
    if (end < text.size()) out += text[end];
    start = end + 1;
  }
  text = std::move(out);
  return Status::Ok();
}

}  // namespace

Status ResolveTaskDependencies(SubmitSchedArgs* args, const TaskResolver& resolve) {
  // Each task costs the daemon requests (FindArrayTask's): no more than a request may name.
  size_t tasks = 0;
  for (const std::string* text : {&args->after, &args->afterok, &args->dependency})
    tasks += static_cast<size_t>(std::count(text->begin(), text->end(), '_'));
  if (tasks > kMaxDependencies)
    return InvalidArgument("too many dependencies: " + std::to_string(tasks) +
                           " array tasks, at most " + std::to_string(kMaxDependencies));
  PP_RETURN_IF_ERROR(ResolveTasksIn(args->after, "--after", resolve));
  PP_RETURN_IF_ERROR(ResolveTasksIn(args->afterok, "--afterok", resolve));
  return ResolveTasksIn(args->dependency, "--dependency", resolve);
}

}  // namespace pinpoint::cli
