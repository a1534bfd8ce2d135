#include "daemon/setup/daemon_loop.h"

#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <string>
#include <vector>

#include "common/log.h"
#include "metrics/metrics.h"

namespace pinpoint::daemon {

namespace {

// One retention pass when due, said in the log. Returns whether it purged anything.
bool Purge(Retention& retention) {
  auto report = retention.RunIfDue();
  if (!report.ok()) {
    log::Error("retention: {}", report.status().message());
    return false;
  }
  for (const auto& problem : report->problems) log::Error("retention: {}", problem);
  for (const auto& user : report->over_budget) log::Warn("retention: {}", user);
  if (report->purged.empty()) return false;
  log::Info("retention: purged {} ended jobs ({} to {}), {} names removed from their directories{}",
            report->purged.size(), *std::min_element(report->purged.begin(), report->purged.end()),
            *std::max_element(report->purged.begin(), report->purged.end()),
            report->entries_removed, report->more ? "; more to do" : "");
  return true;
}

}  // namespace

void RunLoop(const Loop& l) {
  bool stop = false;
  int64_t published = -1;
  int64_t published_ms = 0;
  constexpr int64_t kPublishEveryMs = 1000;
  std::string store_error;
  while (!stop) {
    // One stat per pass: a store deleted or replaced under the daemon is said once, loudly; its
    // writes (submits included) fail with the same line from then on.
    Status store_file = l.store.CheckFile();
    if (!store_file.ok() && store_file.message() != store_error) {
      store_error = store_file.message();
      log::Error("{}", store_error);
    }
    std::vector<int> wake = l.node.WaitFds();
    wake.push_back(l.sig_fd);
    wake.push_back(l.watcher.wake_fd());
    // Requests on job arrays go on a budget at a time, one per pass, and so do the starts and ends
    // of many jobs at once: no sleep in between.
    bool due = l.service.waiting().array_requests > 0 || l.node.MoreDue() || l.retention.MoreDue();
    auto ready = l.server.RunOnce(due ? 0 : static_cast<int>(l.poll_interval_ms), wake);
    for (int fd : ready) {
      if (fd != l.sig_fd) continue;  // the watcher's wake needs no reading: Step takes its news
      signalfd_siginfo info{};
      while (::read(l.sig_fd, &info, sizeof(info)) == sizeof(info)) {
        if (info.ssi_signo == SIGTERM || info.ssi_signo == SIGINT) stop = true;
      }
    }
    l.service.JobsEnded(l.node.Step());
    l.service.PollFollowers();
    l.service.ContinueArrayWork();
    l.service.PollStartingLeases();
    if (Purge(l.retention)) published = -1;
    // At most once a second: a snapshot costs time linear in the active jobs (a user may hold
    // thousands), and scrapes come every few seconds.
    if (l.metrics != nullptr && l.node.generation() != published &&
        l.clock.NowMs() - published_ms >= kPublishEveryMs) {
      published = l.node.generation();
      published_ms = l.clock.NowMs();
      metrics::Snapshot snapshot = l.node.MetricsView();
      snapshot.jobs_purged_total = l.retention.purged_total();
      l.metrics->Publish(metrics::Render(snapshot));
    }
  }
}

}  // namespace pinpoint::daemon
