#include "cli/queue_select.h"

#include <pwd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>

#include "cli/format.h"
#include "cli/job_arrays.h"
#include "cli/usage.h"
#include "common/clock.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/escape.h"
#include "pinpoint/time_limit.h"

namespace pinpoint::cli {

namespace {

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> out;
  size_t from = 0;
  while (from <= text.size()) {
    size_t comma = text.find(',', from);
    if (comma == std::string::npos) comma = text.size();
    out.push_back(text.substr(from, comma - from));
    from = comma + 1;
  }
  return out;
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return text;
}

// One job's value of `field` (QueueFields).
std::string FieldOf(const JobView& job, const std::string& field, int64_t now_ms) {
  const JobRequest& r = job.request;
  if (field == "id") return std::to_string(job.id);
  if (field == "array") return job.array.array_id != 0 ? ArrayTaskName(job.array) : "-";
  if (field == "user") return job.user;
  if (field == "uid") return std::to_string(job.uid);
  if (field == "name") return r.name.empty() ? "-" : r.name;
  if (field == "state") return QueueStateName(job);
  if (field == "reason") return job.reason.empty() ? "-" : job.reason;
  if (field == "detail") return job.detail.empty() ? "-" : job.detail;
  if (field == "gpus") return FormatGpuRequest(r);
  if (field == "devices") {
    std::string out;
    for (const auto& a : job.allocations)
      out += (out.empty() ? "" : ",") + std::to_string(a.device_index);
    return out.empty() ? "-" : out;
  }
  if (field == "cpus") return std::to_string(r.cpus);
  if (field == "priority") return std::to_string(r.priority);
  if (field == "qos") return r.qos.empty() ? "-" : r.qos;
  if (field == "time") {
    if (job.start_ms == 0) return "-";
    return FormatDurationMs(ElapsedMs(job.start_ms, job.end_ms > 0 ? job.end_ms : now_ms));
  }
  if (field == "limit") return r.time_limit_s > 0 ? FormatTimeLimit(r.time_limit_s) : "-";
  if (field == "submit") return std::to_string(job.submit_ms / 1000);
  if (field == "start") return job.start_ms > 0 ? std::to_string(job.start_ms / 1000) : "-";
  return "-";
}

}  // namespace

void AddSelectionOptions(CLI::App* c, JobSelection& s, bool with_jobs) {
  c->add_option("-u,--user", s.user, "only this user's jobs");
  c->add_option("-n,--name", s.names, "only jobs of these names (a comma list)");
  c->add_option(
      "-t,--state,--states", s.states,
      "only jobs in these states: pending, running, ... (a comma list; Slurm's PD, R also)");
  if (with_jobs)
    c->add_option("-j,--jobs", s.jobs,
                  "only these jobs, or the tasks of these arrays (a comma list)");
}

Result<std::vector<JobState>> ParseStates(const std::string& text) {
  static const std::vector<std::pair<std::string, JobState>> kCodes = {
      {"pd", JobState::kPending},
      {"r", JobState::kRunning},
      {"cd", JobState::kCompleted},
      {"f", JobState::kFailed},
      {"ca", JobState::kCancelled}};
  std::vector<JobState> states;
  for (const std::string& word : SplitCommas(text)) {
    std::string lower = Lower(word);
    auto state = JobStateFromName(lower);
    auto code =
        std::find_if(kCodes.begin(), kCodes.end(), [&](const auto& c) { return c.first == lower; });
    if (!state && code != kCodes.end()) state = code->second;
    if (!state)
      return InvalidArgument("--state: '" + EscapeForTerminal(word) +
                             "' is not a job state (pending, running, completed, failed, "
                             "cancelled; PD, R, CD, F, CA)");
    if (std::find(states.begin(), states.end(), *state) == states.end()) states.push_back(*state);
  }
  return states;
}

Status ApplySelection(Client& client, const JobSelection& s, QueueRequest& request) {
  if (!s.user.empty()) request.user = s.user;
  if (!s.names.empty()) request.names = SplitCommas(s.names);
  if (request.names.size() > kQueueMaxNames)
    return InvalidArgument("--name: at most " + std::to_string(kQueueMaxNames) + " names");
  if (!s.states.empty()) {
    auto states = ParseStates(s.states);
    if (!states.ok()) return states.status();
    request.states = std::move(states).value();
  }
  if (!s.jobs.empty()) {
    std::vector<std::string> typed = SplitCommas(s.jobs);
    if (typed.size() > kQueueMaxIds)
      return InvalidArgument("--jobs: at most " + std::to_string(kQueueMaxIds) + " jobs");
    auto selected = SelectJobs(client, typed);
    if (!selected.ok()) return InvalidArgument("--jobs: " + selected.status().message());
    request.ids = selected->ids;
    request.ids.insert(request.ids.end(), selected->arrays.begin(), selected->arrays.end());
    if (request.ids.size() > kQueueMaxIds)
      return InvalidArgument("--jobs: at most " + std::to_string(kQueueMaxIds) + " jobs");
  }
  return Status::Ok();
}

Result<std::vector<JobId>> SelectedIds(Client& client, QueueRequest request) {
  request.all = false;
  request.offset = 0;
  request.limit = kQueueMaxLimit;
  std::vector<JobId> ids;
  while (true) {
    auto reply = client.Queue(request);
    if (!reply.ok()) return reply.status();
    for (const JobView& job : reply->jobs) {
      if (job.array.pending.empty()) {
        ids.push_back(job.id);
        continue;
      }
      // An array's rest is one row for the tasks it stands for: each of them is selected.
      auto pending = ParseArraySpec(job.array.pending);
      if (!pending.ok()) return pending.status();
      auto tasks = ArrayTaskIds(client, job.array.array_id, pending->indices);
      if (!tasks.ok()) return tasks.status();
      ids.insert(ids.end(), tasks->begin(), tasks->end());
    }
    if (reply->more <= 0 || reply->jobs.empty()) break;
    int64_t next = int64_t{request.offset} + static_cast<int64_t>(reply->jobs.size());
    if (next > kQueueMaxOffset) break;
    request.offset = static_cast<int>(next);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

void AddQueueOptions(CLI::App* c, QueueArgs& a) {
  c->add_flag("-a,--all", a.all, "include ended jobs");
  AddSelectionOptions(c, a.select, /*with_jobs=*/true);
  c->add_option("--limit", a.limit, "jobs per page (default 100, at most 10000)")
      ->check(CountIn(0, kQueueMaxLimit));
  c->add_option("--offset", a.offset,
                "skip this many jobs: the queue counts from its oldest job, --all from the newest")
      ->check(CountIn(0, kQueueMaxOffset));
  c->add_option("-o,--format", a.format,
                "for scripts: these fields, tab-separated, one job a line (id,name,state,...)");
  // squeue's -h: no header (help is --help here).
  c->set_help_flag("--help", "Print this help message and exit");
  c->add_flag("-h,--noheader", a.noheader, "no header line (as squeue -h)");
  c->add_flag("--start", a.start,
              "when the pending jobs would start, from the time limits of what runs and waits");
}

Result<int> RunQueue(const std::string& socket, bool json, const QueueArgs& a, std::ostream& out,
                     std::ostream& err) {
  std::vector<std::string> fields;
  if (!a.format.empty()) {
    auto parsed = ParseQueueFields(a.format);
    if (!parsed.ok()) return parsed.status();
    fields = std::move(parsed).value();
  }
  auto client = Client::Connect(socket);
  if (!client.ok()) return client.status();
  QueueRequest request{a.all, std::nullopt, a.limit, a.offset};
  PP_RETURN_IF_ERROR(ApplySelection(*client, a.select, request));
  if (a.start) {
    if (a.all || !fields.empty())
      return InvalidArgument(
          "--start lists pending jobs in a table of its own: leave out --all and --format");
    request.start = true;
    if (request.states.empty()) request.states = {JobState::kPending};
  }
  auto reply = client->Queue(request);
  if (!reply.ok()) return reply.status();
  int64_t now_ms = RealClock().NowMs();
  if (json && a.start) {
    out << ToJson(*reply).value("starts", nlohmann::json::array()).dump(2) << "\n";
  } else if (json) {
    nlohmann::json jobs = nlohmann::json::array();
    for (const auto& job : reply->jobs) jobs.push_back(ToJson(job));
    out << jobs.dump(2) << "\n";
  } else if (a.start) {
    out << FormatStarts(*reply, now_ms);
  } else if (!fields.empty()) {
    out << FormatQueueFields(*reply, fields, !a.noheader, now_ms);
  } else {
    std::string table = FormatQueue(*reply, now_ms);
    if (a.noheader) table.erase(0, table.find('\n') + 1);
    out << table;
  }
  // The next page's command repeats the selection. With --json or --format what scripts parse
  // stays alone on stdout.
  std::string again;
  const JobSelection& s = a.select;
  if (a.start) again += " --start";
  for (const auto& [option, value] : {std::pair{" --name ", &s.names},
                                      {" --state ", &s.states},
                                      {" --jobs ", &s.jobs},
                                      {" --format ", &a.format}}) {
    if (!value->empty()) again += option + EscapeForTerminal(*value);
  }
  (json || !fields.empty() ? err : out) << MoreJobsLine(*reply, a.all, s.user, again);
  return 0;
}

Result<SelectedJobs> SelectForCancel(Client& client, const std::vector<std::string>& typed,
                                     const JobSelection& s) {
  if (!s.any()) {
    if (typed.empty())
      return InvalidArgument(
          "name the jobs to cancel, or select them with --user, --name or --state");
    return SelectJobs(client, typed);
  }
  JobSelection among = s;
  for (const std::string& t : typed) among.jobs += (among.jobs.empty() ? "" : ",") + t;
  // A user other than root cancels only their own jobs: without --user, the selection is theirs.
  if (among.user.empty() && ::getuid() != 0) {
    std::vector<char> buf(16384);
    struct passwd pw {};
    struct passwd* found = nullptr;
    if (::getpwuid_r(::getuid(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr)
      return FailedPrecondition("your uid " + std::to_string(::getuid()) +
                                " has no user name: give --user");
    among.user = found->pw_name;
  }
  QueueRequest request;
  PP_RETURN_IF_ERROR(ApplySelection(client, among, request));
  auto ids = SelectedIds(client, std::move(request));
  if (!ids.ok()) return ids.status();
  SelectedJobs selected;
  selected.ids = std::move(ids).value();
  return selected;
}

const std::vector<std::string>& QueueFields() {
  static const std::vector<std::string> kFields = {
      "id",      "array", "user",     "uid",  "name",  "state",  "reason", "detail", "gpus",
      "devices", "cpus",  "priority", "time", "limit", "submit", "start",  "qos"};
  return kFields;
}

Result<std::vector<std::string>> ParseQueueFields(const std::string& text) {
  std::vector<std::string> fields;
  for (const std::string& word : SplitCommas(text)) {
    std::string field = Lower(word);
    if (std::find(QueueFields().begin(), QueueFields().end(), field) == QueueFields().end()) {
      std::string known;
      for (const std::string& f : QueueFields()) known += (known.empty() ? "" : ",") + f;
      return InvalidArgument("--format: '" + EscapeForTerminal(word) + "' is not a field (" +
                             known + ")");
    }
    fields.push_back(field);
  }
  return fields;
}

std::string FormatQueueFields(const QueueReply& reply, const std::vector<std::string>& fields,
                              bool header, int64_t now_ms) {
  std::string out;
  auto line = [&](auto value_of) {
    for (size_t i = 0; i < fields.size(); ++i) out += (i == 0 ? "" : "\t") + value_of(fields[i]);
    out += "\n";
  };
  if (header) {
    line([](std::string f) {
      std::transform(f.begin(), f.end(), f.begin(),
                     [](unsigned char c) { return std::toupper(c); });
      return f;
    });
  }
  for (const JobView& job : reply.jobs)
    line([&](const std::string& f) { return EscapeForTerminal(FieldOf(job, f, now_ms)); });
  return out;
}

}  // namespace pinpoint::cli
