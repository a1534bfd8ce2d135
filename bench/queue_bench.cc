// `pinpoint queue` with a long queue: 10,000 pending jobs on a simulated node (issue 11 item 7).
// Starts pinpointd (simulated:h100x2), fills both GPUs with one job, submits --jobs pending jobs
// that each carry this process's environment (as `pinpoint submit` sends it), then times the CLI
// binary `pinpoint queue` end to end (fork/exec, connect, reply, table) and reads the daemon's
// RSS from /proc/<pid>/status. Timings go to the report, never to a test's pass/fail.
// Usage: queue_bench --bin-dir build [--jobs 10000] [--runs 20] [--out bench/results/queue.md]
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bench_daemon.h"
#include "common/spawn.h"
#include "pinpoint/client.h"
#include "pinpoint/job.h"

extern char** environ;

namespace {

using nlohmann::json;
using pinpoint::bench::FirstLine;
using pinpoint::bench::Percentile;

double NowMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// A /proc/<pid>/status field in kB ("VmRSS", "VmHWM").
long StatusKb(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
  }
  return -1;
}

// Runs `pinpoint --socket S args...` with stdout to /dev/null; returns its wall time in ms.
double TimeCli(const std::string& bin_dir, const std::string& socket,
               const std::vector<std::string>& args) {
  double t0 = NowMs();
  std::vector<std::string> argv = {bin_dir + "/pinpoint", "--socket", socket};
  argv.insert(argv.end(), args.begin(), args.end());
  auto pid = pinpoint::Spawn({.argv = argv});
  std::optional<int> status = pid.ok() ? pinpoint::WaitChild(*pid, 600'000) : std::nullopt;
  double ms = NowMs() - t0;
  if (!status || !WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    std::cerr << "queue_bench: pinpoint queue failed\n";
    std::exit(1);
  }
  return ms;
}

struct Row {
  std::string what;
  std::vector<double> ms;
  size_t reply_bytes = 0;
  size_t jobs = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::string bin_dir = "build", out_path;
  int jobs = 10000, runs = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--bin-dir")
      bin_dir = argv[i + 1];
    else if (a == "--jobs")
      jobs = std::atoi(argv[i + 1]);
    else if (a == "--runs")
      runs = std::atoi(argv[i + 1]);
    else if (a == "--out")
      out_path = argv[i + 1];
  }
  char tmpl[] = "/tmp/pp-queue-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return 1;
  std::string dir = tmpl, socket = dir + "/sock";
  pid_t daemon = pinpoint::bench::StartDaemon(bin_dir, dir);
  if (daemon < 0) {
    std::cerr << "queue_bench: pinpointd did not start\n";
    return 1;
  }
  auto client = pinpoint::Client::Connect(socket);
  if (!client.ok()) return 1;
  pinpoint::JobRequest r;
  r.argv = {"sleep", "3600"};
  r.cwd = "/";
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos && eq > 0) r.env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  size_t env_bytes = 0;
  for (const auto& [k, v] : r.env) env_bytes += k.size() + v.size() + 2;
  r.gpus = 2;  // holds both GPUs: every job after it waits
  double submit_t0 = NowMs();
  for (int i = 0; i <= jobs; ++i) {
    r.name = "queued-" + std::to_string(i);
    auto reply = client->Submit(pinpoint::SubmitRequest{r, false, std::nullopt});
    if (!reply.ok()) {
      std::cerr << "queue_bench: " << reply.status().message() << "\n";
      return 1;
    }
    r.gpus = 1;
  }
  double submit_s = (NowMs() - submit_t0) / 1e3;
  long rss_before_kb = StatusKb(daemon, "VmRSS");

  std::vector<Row> rows;
  auto measure = [&](const std::string& what, const std::vector<std::string>& args, json request) {
    Row row{what, {}, 0, 0};
    auto reply = client->Call(request);  // raw: the reply's size on the wire is what is measured
    if (!reply.ok()) {
      std::cerr << "queue_bench: " << reply.status().message() << "\n";
      std::exit(1);
    }
    row.reply_bytes = reply->dump().size();
    row.jobs = reply->contains("jobs") ? (*reply)["jobs"].size() : 0;
    for (int i = 0; i < runs; ++i) row.ms.push_back(TimeCli(bin_dir, socket, args));
    rows.push_back(row);
  };
  measure("`pinpoint version` (no listing: process start and one round trip)", {"version"},
          {{"op", "version"}});
  measure("`pinpoint queue --limit 1`", {"queue", "--limit", "1"}, {{"op", "queue"}, {"limit", 1}});
  measure("`pinpoint queue` (first page, default 100)", {"queue"}, {{"op", "queue"}});
  measure("`pinpoint queue --offset 9000` (a later page)", {"queue", "--offset", "9000"},
          {{"op", "queue"}, {"offset", 9000}});
  measure("`pinpoint queue --limit 10000` (largest page)", {"queue", "--limit", "10000"},
          {{"op", "queue"}, {"limit", 10000}});
  measure("`pinpoint queue --all` (history, newest first)", {"queue", "--all"},
          {{"op", "queue"}, {"all", true}});
  long rss_kb = StatusKb(daemon, "VmRSS"), hwm_kb = StatusKb(daemon, "VmHWM");
  ::kill(daemon, SIGTERM);
  pinpoint::WaitChild(daemon, 60'000);
  std::system(("rm -rf " + dir).c_str());

  std::ostringstream md;
  md << "# queue_bench: `pinpoint queue` with " << jobs << " pending jobs\n\n"
     << "`queue_bench` starts pinpointd on a simulated h100x2 node, fills both GPUs with one job "
        "and "
     << "submits " << jobs
     << " one-GPU jobs that wait behind it (reason `resources`). Each job carries "
     << "the bench's environment (" << r.env.size() << " variables, " << env_bytes << " bytes), as "
     << "`pinpoint submit` sends it. Submitting them took " << static_cast<int>(submit_s) << " s. "
     << "Wall time is the whole `pinpoint` process (fork/exec, connect, reply, table to "
        "/dev/null), "
     << runs << " runs each. Reply bytes: the daemon's reply to the same request.\n\n"
     << "Targets (issue 11, item 7): `pinpoint queue` under 100 ms, the daemon's RSS under 100 "
        "MB.\n"
     << "Before paging (all jobs with their environments in one reply) 5,000 pending jobs took "
     << "1.6-2.0 s and a 3.7 MB reply.\n\n"
     << "| listing | jobs in reply | reply bytes | p50 ms | max ms |\n|---|---|---|---|---|\n";
  for (const auto& row : rows) {
    char line[256];
    std::snprintf(line, sizeof(line), "| %s | %zu | %zu | %.1f | %.1f |\n", row.what.c_str(),
                  row.jobs, row.reply_bytes, Percentile(row.ms, 50),
                  *std::max_element(row.ms.begin(), row.ms.end()));
    md << line;
  }
  md << "\npinpointd RSS (VmRSS): " << rss_before_kb / 1024 << " MiB after the submits, "
     << rss_kb / 1024 << " MiB after the listings; peak (VmHWM) " << hwm_kb / 1024 << " MiB.\n\n"
     << "Machine: " << FirstLine("nproc") << " CPUs,"
     << FirstLine("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2") << ", "
     << FirstLine("uname -sr") << ", load average (1 min) "
     << FirstLine("cut -d' ' -f1 /proc/loadavg") << "; date "
     << FirstLine("date -u +%Y-%m-%dT%H:%MZ") << ".\n\n"
     << "Reproduce: `ninja -C build queue_bench pinpointd pinpoint pinpoint-shim && "
        "build/queue_bench "
     << "--bin-dir build --out bench/results/queue.md`\n";
  std::cout << md.str();
  if (!out_path.empty()) std::ofstream(out_path) << md.str();
  return 0;
}
