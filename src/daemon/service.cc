#include "daemon/service.h"

#include <algorithm>

#include "api/protocol.h"
#include "daemon/users.h"
#include "pinpoint/client.h"
#include "store/job_store.h"

namespace pinpoint::daemon {

using nlohmann::json;

namespace {

json EventsJson(const std::vector<store::JobEvent>& events) {
  json out = json::array();
  for (const auto& e : events)
    out.push_back({{"time_ms", e.time_ms}, {"kind", e.kind}, {"detail", e.detail}});
  return out;
}

Result<std::vector<JobId>> IdList(const json& request) {
  if (!request.contains("ids") || !request["ids"].is_array() || request["ids"].empty())
    return InvalidArgument("\"ids\" must be a non-empty array of job ids");
  if (request["ids"].size() > 10000) return InvalidArgument("at most 10000 ids at once");
  std::vector<JobId> ids;
  for (const auto& v : request["ids"]) {
    if (!v.is_number_integer() || v.get<int64_t>() <= 0)
      return InvalidArgument("\"ids\" must hold positive job ids");
    ids.push_back(v.get<int64_t>());
  }
  return ids;
}

// A job as a caller may see it: the environment (which may hold secrets) only for its owner
// and root.
json JobFor(const api::Caller& caller, JobRecord job) {
  bool hidden = !api::MayControlJob(caller, job.uid);
  if (hidden) job.request.env.clear();
  json j = ToJson(job);
  if (hidden) j["request"]["env_hidden"] = true;
  return j;
}

// A job in a listing: the record without its environment, which only `show` sends (to the
// job's owner and root). A listing of 1000 jobs stays small whatever their environments hold.
json ListedJob(JobRecord job) {
  job.request.env.clear();
  json j = ToJson(job);
  j["request"].erase("env");
  return j;
}

// A listing's page field: an integer in [lo, hi]; absent, null or 0 gives `otherwise`.
constexpr int kMaxPageOffset = 1'000'000'000;
Result<int> PageField(const json& request, const char* key, int lo, int hi, int otherwise) {
  if (!request.contains(key) || request[key].is_null()) return otherwise;
  const json& v = request[key];
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
    return InvalidArgument(std::string("\"") + key + "\" must be a count between " + std::to_string(lo) +
                           " and " + std::to_string(hi));
  int value = static_cast<int>(v.get<int64_t>());
  return value == 0 ? otherwise : value;
}

}  // namespace

std::optional<json> Service::Handle(const api::Caller& caller, const json& request,
                                    api::ConnId conn) {
  bool deferred = false;
  Result<json> reply = Internal("unhandled");
  try {
    reply = Dispatch(caller, request, conn, &deferred);
  } catch (const std::exception& e) {  // a bug must cost one request, never the daemon
    reply = Internal(std::string("internal error: ") + e.what());
  }
  if (deferred) return std::nullopt;
  if (!reply.ok()) return api::ErrorReply(reply.status());
  return api::OkReply(*reply);
}

Result<json> Service::Dispatch(const api::Caller& caller, const json& request, api::ConnId conn,
                               bool* deferred) {
  const std::string op = request["op"].get<std::string>();
  if (op == "version") {
    return json{{"version", PINPOINT_VERSION},
                {"backend", node_->options().backend_kind},
                {"driver", node_->options().driver_version},
                {"schema", store::JobStore::kCurrentVersion},
                {"metrics_port", metrics_port_ > 0 ? json(metrics_port_) : json(nullptr)}};
  }
  if (op == "submit") {
    if (!request.contains("request")) return InvalidArgument("submit needs a \"request\" object");
    if (request.contains("wait") && !request["wait"].is_boolean())
      return InvalidArgument("\"wait\" must be true or false");
    std::optional<std::string> key;
    if (request.contains("idempotency_key")) {
      if (!request["idempotency_key"].is_string())
        return InvalidArgument("\"idempotency_key\" must be a string");
      key = request["idempotency_key"].get<std::string>();
    }
    auto job_request = RequestFromJson(request["request"]);
    if (!job_request.ok()) return job_request.status();
    auto job = node_->Submit(caller, std::move(job_request).value(), key);
    if (!job.ok()) return job.status();
    // A retried submit may find its job already ended: nothing would wake a waiter then.
    if (request.value("wait", false) == true && !IsFinal(job->state)) {
      waiters_[job->id].push_back({conn, caller});
      *deferred = true;
      return json::object();
    }
    return json{{"job", ToJson(*job)}};
  }
  if (op == "wait") {
    auto id = api::JobIdField(request, "id");
    if (!id.ok()) return id.status();
    auto job = node_->Get(*id);
    if (!job.ok()) return job.status();
    if (IsFinal(job->state)) return json{{"job", JobFor(caller, *job)}};
    waiters_[*id].push_back({conn, caller});
    *deferred = true;
    return json::object();
  }
  if (op == "queue") {
    std::optional<uint32_t> uid;
    if (request.contains("user")) {
      if (!request["user"].is_string()) return InvalidArgument("\"user\" must be a user name");
      auto user = LookupName(request["user"].get<std::string>());
      if (!user.ok()) return InvalidArgument(user.status().message());
      uid = user->uid;
    }
    auto offset = PageField(request, "offset", 0, kMaxPageOffset, 0);
    if (!offset.ok()) return offset.status();
    auto limit = PageField(request, "limit", 0, kQueueMaxLimit, kQueueDefaultLimit);
    if (!limit.ok()) return limit.status();
    bool all = request.contains("all") && request["all"].is_boolean() && request["all"].get<bool>();
    auto page = node_->List(all, uid, *offset, *limit);
    if (!page.ok()) return page.status();
    json out = json::array();
    for (auto& job : page->jobs) out.push_back(ListedJob(std::move(job)));
    int64_t more = std::max<int64_t>(0, page->total - *offset - static_cast<int64_t>(page->jobs.size()));
    return json{{"jobs", out},           {"backend", node_->options().backend_kind},
                {"total", page->total},  {"offset", *offset},
                {"limit", *limit},       {"more", more}};
  }
  if (op == "show") {
    auto id = api::JobIdField(request, "id");
    if (!id.ok()) return id.status();
    auto job = node_->Get(*id);
    if (!job.ok()) return job.status();
    auto events = node_->Events(*id);
    json out{{"job", JobFor(caller, *job)}};
    out["events"] = events.ok() ? EventsJson(*events) : json::array();
    return out;
  }
  if (op == "cancel") {
    auto ids = IdList(request);
    if (!ids.ok()) return ids.status();
    auto results = node_->Cancel(caller, *ids);
    json out = json::array();
    for (size_t i = 0; i < ids->size(); ++i) {
      json r{{"id", (*ids)[i]}, {"ok", results[i].ok()}};
      if (!results[i].ok())
        r["error"] = {{"code", CodeName(results[i].code())}, {"message", results[i].message()}};
      out.push_back(r);
    }
    return json{{"results", out}};
  }
  if (op == "gpus") return node_->GpusView();
  if (op == "logs") {
    auto id = api::JobIdField(request, "id");
    if (!id.ok()) return id.status();
    std::string stream = "stdout";
    if (request.contains("stream")) {
      if (!request["stream"].is_string()) return InvalidArgument("\"stream\" must be stdout or stderr");
      stream = request["stream"].get<std::string>();
    }
    uint64_t max_bytes = 256 * 1024;
    if (request.contains("max_bytes")) {
      if (!request["max_bytes"].is_number_unsigned() || request["max_bytes"].get<uint64_t>() > (1u << 20) / 2)
        return InvalidArgument("\"max_bytes\" must be at most 524288");
      max_bytes = request["max_bytes"].get<uint64_t>();
    }
    auto text = node_->Logs(caller, *id, stream, max_bytes);
    if (!text.ok()) return text.status();
    // Logs are bytes; the server replaces invalid UTF-8 when it writes the reply.
    return json{{"id", *id}, {"stream", stream}, {"data", *text}};
  }
  return InvalidArgument("unknown op '" + op + "'");
}

void Service::Closed(api::ConnId conn) {
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    auto& conns = it->second;
    std::erase_if(conns, [&](const auto& waiter) { return waiter.first == conn; });
    it = conns.empty() ? waiters_.erase(it) : std::next(it);
  }
}

void Service::JobsEnded(const std::vector<JobId>& ids) {
  for (JobId id : ids) {
    auto it = waiters_.find(id);
    if (it == waiters_.end()) continue;
    auto job = node_->Get(id);
    for (const auto& [conn, caller] : it->second) {
      if (reply_) reply_(conn, job.ok() ? api::OkReply({{"job", JobFor(caller, *job)}}) : api::ErrorReply(job.status()));
    }
    waiters_.erase(it);
  }
}

}  // namespace pinpoint::daemon
