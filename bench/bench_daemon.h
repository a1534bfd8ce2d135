// For the single-file benchmarks (bench/*_bench.cc): a pinpointd of their own on a simulated
// node, and the small helpers their reports share.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/spawn.h"

namespace pinpoint::bench {

// Starts `<bin_dir>/pinpointd` on `backend` with its state, socket (<dir>/sock) and log
// (<dir>/pinpointd.log) in `dir`, and `config` (a file, or "" for none), and returns its pid once
// it serves requests (--ready-fd), or -1 when it did not start.
inline pid_t StartDaemon(const std::string& bin_dir, const std::string& dir,
                         const std::string& backend = "simulated:h100x2",
                         const std::string& config = "") {
  constexpr int kReadyFd = 3, kReadyTimeoutMs = 120'000;
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return -1;
  std::vector<std::string> argv = {bin_dir + "/pinpointd",
                                   "--state-dir",
                                   dir + "/state",
                                   "--socket",
                                   dir + "/sock",
                                   "--backend",
                                   backend,
                                   "--log-level",
                                   "warn",
                                   "--ready-fd",
                                   std::to_string(kReadyFd)};
  if (!config.empty()) argv.insert(argv.end(), {"--config", config});
  auto daemon = pinpoint::Spawn({.argv = argv,
                                 .out = pinpoint::SpawnStream::File(dir + "/pinpointd.log"),
                                 .err_to_out = true,
                                 .append_output = true,
                                 .pass_fds = {{ready[1], kReadyFd}}});
  ::close(ready[1]);
  pollfd p{ready[0], POLLIN, 0};
  char buf[8];
  bool ok =
      daemon.ok() && ::poll(&p, 1, kReadyTimeoutMs) > 0 && ::read(ready[0], buf, sizeof(buf)) > 0;
  ::close(ready[0]);
  if (!ok && daemon.ok()) {
    ::kill(*daemon, SIGKILL);
    pinpoint::WaitChild(*daemon, kReadyTimeoutMs);
  }
  return ok ? *daemon : -1;
}

// The first line a shell command prints (for the machine line of a report).
inline std::string FirstLine(const std::string& cmd) {
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return "";
  char buf[512] = {};
  if (std::fgets(buf, sizeof(buf), p) == nullptr) buf[0] = 0;
  ::pclose(p);
  std::string s = buf;
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

// CLOCK_REALTIME in ns: the one clock a benchmark, pinpointd and the jobs all read.
inline int64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The file's text ("" when it cannot be read): a job's stdout.
inline std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

}  // namespace pinpoint::bench
