#include "cli/job_arrays.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/format.h"
#include "cli/submit_wait.h"
#include "common/decimal.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/array_spec.h"
#include "pinpoint/escape.h"

namespace pinpoint::cli {

bool IsJobId(const std::string& text) {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  return text.find_first_not_of('0') != std::string::npos;
}

using nlohmann::json;

std::optional<JobSelector> ParseJobSelector(const std::string& text) {
  size_t under = text.find('_');
  std::string id = text.substr(0, under);
  if (!IsJobId(id)) return std::nullopt;
  JobSelector selector{std::stoll(id), {}};
  if (under == std::string::npos) return selector;
  std::string_view rest = std::string_view(text).substr(under + 1);
  if (rest.size() >= 2 && rest.front() == '[' && rest.back() == ']') {
    rest = rest.substr(1, rest.size() - 2);
    if (rest.find('%') != std::string_view::npos) return std::nullopt;  // a throttle names no task
    auto spec = ParseArraySpec(rest);
    if (!spec.ok()) return std::nullopt;
    selector.indices = spec->indices;
    return selector;
  }
  auto index = ParseDecimal(rest, kMaxArrayIndex);
  if (!index || *index > kMaxArrayIndex) return std::nullopt;
  selector.indices = {static_cast<int>(*index)};
  return selector;
}

namespace {

// Array `array_id`'s description, from its first task. Errors: kNotFound for a job of no array.
Result<ArrayTask> ArrayOf(Client& client, JobId array_id) {
  auto first = client.Show(ShowRequest{array_id});
  if (!first.ok()) return first.status();
  if (first->job.array.array_id != array_id)
    return NotFound("job " + std::to_string(array_id) + " is not a job array");
  return first->job.array;
}

// The job id of task `index` of array `a` (whose first task is `array_id`).
Result<JobId> TaskOf(Client& client, JobId array_id, const ArrayTask& a, int index) {
  auto none =
      NotFound("array " + std::to_string(array_id) + " has no task " + std::to_string(index));
  if (index < a.min_index || index > a.max_index || a.count < 1) return none;
  // Indices ascend with ids: a full range is found by arithmetic, any other list by bisection.
  if (a.max_index - a.min_index + 1 == a.count) return array_id + (index - a.min_index);
  JobId lo = array_id, hi = array_id + a.count - 1;
  while (lo <= hi) {
    JobId mid = lo + (hi - lo) / 2;
    auto task = client.Show(ShowRequest{mid});
    if (!task.ok()) return task.status();
    int at = task->job.array.index;
    if (task->job.array.array_id != array_id) return none;
    if (at == index) return mid;
    if (at < index)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return none;
}

// Each selector of `typed` in order, resolved: a plain id as itself (`plain` true), tasks as
// their job ids, with `selector` as parsed. Errors: SelectJobs's.
template <typename OnIds>
Status ForEachSelected(Client& client, const std::vector<std::string>& typed, OnIds on_ids) {
  for (const std::string& text : typed) {
    auto parsed = ParseJobSelector(text);
    if (!parsed) return InvalidArgument("'" + EscapeForTerminal(text) + "' is not a job id");
    if (parsed->indices.empty()) {
      on_ids(std::vector<JobId>{parsed->id}, /*plain=*/true, *parsed);
      continue;
    }
    auto ids = ArrayTaskIds(client, parsed->id, parsed->indices);
    if (!ids.ok()) return ids.status();
    on_ids(*ids, /*plain=*/false, *parsed);
  }
  return Status::Ok();
}

}  // namespace

Result<JobId> FindArrayTask(Client& client, JobId array_id, int index) {
  auto a = ArrayOf(client, array_id);
  if (!a.ok()) return a.status();
  return TaskOf(client, array_id, *a, index);
}

Result<std::vector<JobId>> ArrayTaskIds(Client& client, JobId array_id,
                                        const std::vector<int>& indices) {
  auto a = ArrayOf(client, array_id);  // one request for the array, then arithmetic or bisection
  if (!a.ok()) return a.status();
  std::vector<JobId> ids;
  for (int index : indices) {
    auto id = TaskOf(client, array_id, *a, index);
    if (!id.ok()) return id.status();
    ids.push_back(*id);
  }
  return ids;
}

Result<SelectedJobs> SelectJobs(Client& client, const std::vector<std::string>& typed) {
  SelectedJobs selected;
  PP_RETURN_IF_ERROR(ForEachSelected(
      client, typed, [&](const std::vector<JobId>& ids, bool plain, const JobSelector& selector) {
        auto& into = plain ? selected.arrays : selected.ids;
        into.insert(into.end(), ids.begin(), ids.end());
        for (size_t i = 0; !plain && i < ids.size(); ++i) {
          selected.task_names[ids[i]] =
              std::to_string(selector.id) + "_" + std::to_string(selector.indices[i]);
        }
      }));
  return selected;
}

Result<std::vector<JobId>> SelectJobIds(Client& client, const std::vector<std::string>& typed) {
  std::vector<JobId> all;
  PP_RETURN_IF_ERROR(
      ForEachSelected(client, typed, [&](const std::vector<JobId>& ids, bool, const JobSelector&) {
        all.insert(all.end(), ids.begin(), ids.end());
      }));
  return all;
}

Result<std::vector<JobView>> WaitForJobs(Client& client, const std::vector<JobId>& ids) {
  std::vector<JobView> ended;
  if (ids.size() == 1) {
    auto reply = client.Wait(WaitRequest{ids[0], {}});
    if (!reply.ok()) return reply.status();
    ended.push_back(std::move(reply->job));
  }
  for (size_t at = 0; ids.size() > 1 && at < ids.size(); at += kWaitMaxIds) {
    WaitRequest request;
    request.ids.assign(
        ids.begin() + static_cast<std::ptrdiff_t>(at),
        ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), at + kWaitMaxIds)));
    auto reply = client.Wait(request);
    if (!reply.ok()) return reply.status();
    for (auto& job : reply->jobs) ended.push_back(std::move(job));
  }
  return ended;
}

std::vector<JobId> ArrayJobIds(JobId array_id, int count, int from) {
  std::vector<JobId> ids;
  for (int i = from; i < count; ++i) ids.push_back(array_id + i);
  return ids;
}

Result<int> RunWait(const std::string& socket, const std::vector<std::string>& typed,
                    bool json_output, std::ostream& out) {
  auto client = Client::Connect(socket);
  if (!client.ok()) return client.status();
  auto selected = SelectJobs(*client, typed);
  if (!selected.ok()) return selected.status();
  // Plain ids first (an array's id waits for every task), then the tasks named as tasks.
  std::vector<JobId> ids = selected->arrays;
  ids.insert(ids.end(), selected->ids.begin(), selected->ids.end());
  auto named = WaitForJobs(*client, ids);
  if (!named.ok()) return named.status();
  json jobs = json::array();
  int code = 0;
  for (size_t at = 0; at < named->size(); ++at) {
    std::vector<JobView> ended = {std::move((*named)[at])};
    // An array's id: its first task has ended; the others have the ids that follow it.
    JobId id = ended[0].id;
    bool array = ended[0].array.array_id == id && at < selected->arrays.size();
    if (array && ended[0].array.count > 1) {
      auto tasks = WaitForJobs(*client, ArrayJobIds(id, ended[0].array.count, 1));
      if (!tasks.ok()) return tasks.status();
      for (auto& task : *tasks) ended.push_back(std::move(task));
    }
    for (const JobView& task : ended) {
      if (task.state != JobState::kCompleted) code = 1;
      if (json_output) jobs.push_back(ToJson(task));
    }
    if (json_output) continue;
    if (array)
      out << FormatArrayEnd(id, ended);
    else
      out << FormatJobEnd(ended[0]);
  }
  if (json_output) out << jobs.dump(2) << "\n";
  return code;
}

Result<int> FinishArraySubmit(const std::string& socket, const SubmitReply& reply, bool wait,
                              bool held, bool json_output, std::ostream& out, std::ostream& err) {
  const SubmittedArrayView& array = *reply.array;
  std::string what = "array " + std::to_string(array.id) + " (" +
                     (array.count == 1 ? "1 task: job " + std::to_string(array.first_job_id)
                                       : std::to_string(array.count) + " tasks: jobs " +
                                             std::to_string(array.first_job_id) + " to " +
                                             std::to_string(array.last_job_id)) +
                     ")";
  if (!wait) {
    if (json_output)
      out << ToJson(reply).dump(2) << "\n";
    else
      out << "submitted " << what << (held ? " (held)" : "") << "\n";
    return 0;
  }
  auto waited =
      WaitArrayCancellingOnSignal(socket, array.id, array.count, err,
                                  "pinpoint: submitted " + what + ", waiting (Ctrl-C cancels it)");
  if (!waited.ok()) return waited.status();
  if (json_output) {
    json tasks = json::array();
    for (const JobView& task : waited->tasks) tasks.push_back(ToJson(task));
    out << tasks.dump(2) << "\n";
  } else if (!waited->tasks.empty()) {
    out << FormatArrayEnd(array.id, waited->tasks);
  }
  return SubmitWaitExitCode(*waited);
}

}  // namespace pinpoint::cli
