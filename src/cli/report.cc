#include "cli/report.h"

#include <algorithm>
#include <vector>

#include "cli/report_csv.h"
#include "cli/time_range.h"
#include "common/clock.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/client.h"

namespace pinpoint::cli {

namespace {

Result<QueueReply> Send(const std::string& socket, const QueueRequest& request) {
  auto client = Client::Connect(socket);
  if (!client.ok()) return client.status();
  return client->Queue(request);
}

}  // namespace

Result<int> RunReport(const std::string& socket, bool json_output, const ReportArgs& a,
                      const std::string& user, int limit, std::ostream& out) {
  if (a.jobs && !a.csv) return InvalidArgument("--jobs goes with --csv");
  if (a.csv && json_output) return InvalidArgument("--csv and --json are two formats: choose one");
  QueueRequest base{true, std::nullopt, 0, 0};
  base.enforcement = true;  // the verdicts it counts
  if (!user.empty()) base.user = user;
  int64_t now = RealClock().NowMs();
  if (!a.since.empty()) {
    auto since = ParseWhen(a.since, now, "--since");
    if (!since.ok()) return since.status();
    base.ended_after_ms = *since;
  }
  if (!a.until.empty()) {
    auto until = ParseWhen(a.until, now, "--until");
    if (!until.ok()) return until.status();
    base.ended_before_ms = *until;
  }
  std::vector<JobView> jobs;
  int want = limit > 0 ? limit : 10000;
  while (static_cast<int>(jobs.size()) < want) {
    QueueRequest req = base;
    req.offset = static_cast<int>(jobs.size());
    req.limit = std::min(want - req.offset, 1000);  // 1000 a page
    auto reply = Send(socket, req);
    if (!reply.ok()) return reply.status();
    for (auto& job : reply->jobs) jobs.push_back(std::move(job));
    if (reply->jobs.empty() || reply->more == 0) break;
  }
  UsageReport report = Report(jobs);
  if (a.csv)
    out << (a.jobs ? JobsCsv(jobs) : ReportCsv(report));
  else if (json_output)
    out << ToJson(report).dump(2) << "\n";
  else
    out << FormatReport(report);
  return 0;
}

}  // namespace pinpoint::cli
