#include "cli/show_logs.h"

#include <ostream>

#include "cli/advice.h"
#include "cli/format.h"
#include "cli/job_arrays.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/client.h"
#include "pinpoint/escape.h"

namespace pinpoint::cli {

using nlohmann::json;

json WithOk(json reply) {
  reply["ok"] = true;
  return reply;
}

Result<int> RunShow(const std::string& socket, bool json_output, const std::string& shown,
                    std::ostream& out) {
  auto client = Client::Connect(socket);
  if (!client.ok()) return client.status();
  auto ids = SelectJobIds(*client, {shown});
  if (!ids.ok()) return ids.status();
  json all = json::array();
  for (JobId id : *ids) {
    auto reply = client->Show(ShowRequest{id});
    if (!reply.ok()) return reply.status();
    Advice advice = AdviseJob(reply->job);
    if (json_output) {
      json j = ToJson(*reply);
      j["advice"] = {{"text", advice.text},
                     {"suggested_gpu_mem_bytes",
                      advice.enough_data ? json(advice.suggested_gpu_mem_bytes) : json(nullptr)}};
      all.push_back(std::move(j));
      continue;
    }
    if (id != ids->front()) out << "\n";
    out << FormatJob(*reply, advice.text);
  }
  if (json_output) out << (all.size() == 1 ? all[0] : all).dump(2) << "\n";
  return 0;
}

Result<int> RunLogs(const std::string& socket, bool json_output, const LogsArgs& a,
                    std::ostream& out) {
  auto client = Client::Connect(socket);
  if (!client.ok()) return client.status();
  auto ids = SelectJobIds(*client, {a.job});
  if (!ids.ok()) return ids.status();
  if (ids->size() != 1)
    return InvalidArgument("logs reads one job or task at a time ('" + EscapeForTerminal(a.job) +
                           "' names " + std::to_string(ids->size()) + ")");
  LogsRequest request{ids->front(), a.stderr_stream ? LogStream::kStderr : LogStream::kStdout,
                      kLogsDefaultMaxBytes};
  request.tail_lines = a.tail_lines;
  auto reply = client->Logs(request);
  while (true) {
    if (!reply.ok()) return reply.status();
    // --json: one reply as it always was; with --follow one compact line per piece.
    if (json_output)
      out << (a.follow ? WithOk(ToJson(*reply)).dump() : WithOk(ToJson(*reply)).dump(2)) << "\n";
    else
      out << reply->data;
    out.flush();
    if (!a.follow || reply->ended) return 0;
    LogsRequest next{request.id, request.stream, kLogsMaxBytes};
    next.from_offset = reply->end_offset;
    next.follow = true;
    reply = client->Logs(next);
  }
}

}  // namespace pinpoint::cli
