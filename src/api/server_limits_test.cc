// The server's per-client bounds as pure rules (api/server_limits.h): who is admitted, when a
// connection has been idle too long.
#include "api/server_limits.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace pinpoint::api {
namespace {

TEST(ConnectionLimitsTest, AdmitsWithinEachBound) {
  ServerLimits limits;
  limits.max_connections = 10;
  limits.root_reserved_connections = 3;
  limits.max_connections_per_uid = 4;
  struct Case {
    std::vector<uint32_t> open;  // connections held before
    uint32_t uid;
    bool admitted;
    const char* message;
  } cases[] = {
      {{}, 1000, true, ""},
      {{1000, 1000, 1000}, 1000, true, ""},
      {{1000, 1000, 1000, 1000},
       1000,
       false,
       "too many connections from uid 1000 (4 open, at most 4"},
      {{1000, 1000, 1000, 1000}, 1001, true, ""},
      {{1000, 1000, 1000, 1000}, 0, true, ""},  // root has no per-uid cap
      {{0, 0, 0, 0, 0, 0}, 0, true, ""},
      {{1, 2, 3, 4, 5, 6, 7}, 8, false, "maximum of 7 connections for users other than root"},
      {{1, 2, 3, 4, 5, 6, 7}, 0, true, ""},
      {{1, 2, 3, 4, 5, 6, 7, 0, 0}, 0, true, ""},
      {{1, 2, 3, 4, 5, 6, 7, 0, 0, 0}, 0, false, "maximum of 10 connections"},
  };
  for (const auto& c : cases) {
    ConnectionLimits counts(limits);
    for (uint32_t uid : c.open) counts.Opened(uid);
    Status s = counts.Admit(c.uid);
    EXPECT_EQ(s.ok(), c.admitted) << "uid " << c.uid << " after " << c.open.size();
    if (!c.admitted) {
      EXPECT_EQ(s.code(), Code::kUnavailable);
      EXPECT_NE(s.message().find(c.message), std::string::npos) << s.message();
    }
  }
  ConnectionLimits counts(limits);
  counts.Opened(1000);
  counts.Opened(1000);
  counts.Closed(1000);
  counts.Closed(4242);  // never opened: ignored
  EXPECT_EQ(counts.total(), 1u);
  EXPECT_EQ(counts.of_uid(1000), 1u);
}

TEST(IdleExpiredTest, ProgressWaitsAndSlowReaders) {
  const int64_t t = 60'000;
  struct Case {
    ConnActivity conn;
    int64_t now_ms;
    bool expired;
  } cases[] = {
      {{1000, 0, 0}, 1000 + t - 1, false},   {{1000, 0, 0}, 1000 + t, true},  // idle
      {{1000, 0, 1}, 1000 + 100 * t, false},  // waiting on the daemon (a wait)
      {{1000, 5, 1}, 1000 + t, true},         // a wait that has a reply the client does not take
      {{1000, 5, 0}, 1000 + t, true},         // a slow reader
      {{1000, 5, 0}, 1000 + t - 1, false},   {{1000, 0, 0}, 0, false},  // the clock went back
  };
  for (const auto& c : cases) {
    EXPECT_EQ(IdleExpired(c.conn, c.now_ms, t), c.expired)
        << c.conn.last_progress_ms << " " << c.conn.unsent_bytes << " " << c.conn.deferred_replies
        << " " << c.now_ms;
  }
  EXPECT_FALSE(IdleExpired({0, 0, 0}, 1'000'000'000, 0));  // 0: no timeout
}

}  // namespace
}  // namespace pinpoint::api
