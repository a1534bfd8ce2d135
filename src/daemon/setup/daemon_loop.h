// pinpointd's main loop (RunDaemon's last part, daemon.cc): one thread turns the API server, the
// node, the service's deferred work, retention and the metrics, until SIGTERM or SIGINT.
#pragma once

#include <cstdint>

#include "api/server.h"
#include "common/clock.h"
#include "daemon/node/node.h"
#include "daemon/service/service.h"
#include "daemon/setup/retention.h"
#include "metrics/http_server.h"
#include "store/job_store.h"
#include "watch/watcher.h"

namespace pinpoint::daemon {

// What the main loop turns: each pass answers requests, steps the node, follows logs and
// arrays, purges, and publishes metrics, until SIGTERM or SIGINT.
struct Loop {
  store::JobStore& store;
  Node& node;
  Service& service;
  api::Server& server;
  watch::Watcher& watcher;
  Retention& retention;
  metrics::MetricsServer* metrics;  // null: no endpoint
  Clock& clock;
  int sig_fd;
  int64_t poll_interval_ms;
};
void RunLoop(const Loop& l);

}  // namespace pinpoint::daemon
