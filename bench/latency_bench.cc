// Submit-to-exec latency of pinpointd on an idle simulated node: for each of N trivial jobs,
// the time from just before the client sends "submit" to the moment the job's program starts
// (the job is this binary in --stamp mode, printing CLOCK_REALTIME at the top of main).
// Jobs run one after another, so the node is idle at every submit.
// Usage: latency_bench --bin-dir build [--jobs 1000] [--out bench/results/latency.md]
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
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pinpoint/client.h"
#include "pinpoint/job.h"

namespace {

int64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string FirstLine(const std::string& cmd) {
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return "";
  char buf[512] = {};
  if (std::fgets(buf, sizeof(buf), p) == nullptr) buf[0] = 0;
  ::pclose(p);
  std::string s = buf;
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--stamp") == 0) {
    std::printf("%lld\n", static_cast<long long>(NowNs()));
    return 0;
  }
  std::string bin_dir = "build", out_path;
  int jobs = 1000;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--bin-dir") bin_dir = argv[i + 1];
    else if (a == "--jobs") jobs = std::atoi(argv[i + 1]);
    else if (a == "--out") out_path = argv[i + 1];
  }
  char tmpl[] = "/tmp/pp-latency-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return 1;
  std::string dir = tmpl, socket = dir + "/sock";
  std::string self = FirstLine("readlink -f /proc/" + std::to_string(::getpid()) + "/exe");
  int ready[2];
  if (::pipe(ready) != 0) return 1;
  pid_t daemon = ::fork();
  if (daemon == 0) {
    ::close(ready[0]);
    int log = ::open((dir + "/pinpointd.log").c_str(), O_WRONLY | O_CREAT, 0644);
    ::dup2(log, 1);
    ::dup2(log, 2);
    std::string bin = bin_dir + "/pinpointd", fd = std::to_string(ready[1]);
    ::execl(bin.c_str(), bin.c_str(), "--state-dir", (dir + "/state").c_str(), "--socket",
            socket.c_str(), "--backend", "simulated:h100x2", "--log-level", "warn", "--ready-fd",
            fd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(ready[1]);
  char buf[8];
  if (::read(ready[0], buf, sizeof(buf)) <= 0) {
    std::cerr << "latency_bench: pinpointd did not start\n";
    return 1;
  }
  auto client = pinpoint::Client::Connect(socket);
  if (!client.ok()) return 1;
  std::vector<double> latency_ms;
  pinpoint::JobRequest r;
  r.argv = {self, "--stamp"};
  r.cwd = "/";
  r.env = {{"PATH", "/usr/bin:/bin"}};
  r.gpus = 1;
  r.gpu_mem_bytes = 1ull << 30;
  for (int i = 0; i < jobs; ++i) {
    int64_t t0 = NowNs();
    auto reply = client->Call({{"op", "submit"}, {"request", pinpoint::ToJson(r)}, {"wait", true}});
    if (!reply.ok()) {
      std::cerr << "latency_bench: " << reply.status().message() << "\n";
      return 1;
    }
    int64_t id = (*reply)["job"]["id"].get<int64_t>();
    std::string stamp = Slurp(dir + "/state/jobs/" + std::to_string(id) + "/stdout");
    latency_ms.push_back(static_cast<double>(std::stoll(stamp) - t0) / 1e6);
  }
  ::kill(daemon, SIGTERM);
  ::waitpid(daemon, nullptr, 0);
  std::system(("rm -rf " + dir).c_str());

  char line[512];
  std::snprintf(line, sizeof(line), "| %d | %.2f | %.2f | %.2f | %.2f |", jobs, Percentile(latency_ms, 50),
                Percentile(latency_ms, 99), *std::max_element(latency_ms.begin(), latency_ms.end()),
                Percentile(latency_ms, 0));
  std::ostringstream md;
  md << "# Submit-to-exec latency\n\n"
     << "`latency_bench`: " << jobs << " trivial jobs (1 GiB slices), one after another, on an idle "
     << "simulated h100x2 node. Latency = from just before the client sends `submit` to the first "
     << "instruction of the job's `main` (CLOCK_REALTIME in both processes). It includes the durable "
     << "SQLite insert (synchronous=FULL), the durable start record, the fork/exec of pinpoint-shim, "
     << "its durable job.pid record "
     << "and its fork/exec of the job.\n\n"
     << "Targets (issue 2): p50 < 10 ms, p99 < 50 ms.\n\n"
     << "| jobs | p50 ms | p99 ms | max ms | min ms |\n|---|---|---|---|---|\n"
     << line << "\n\n"
     << "Machine: " << FirstLine("nproc") << " CPUs, " << FirstLine("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2")
     << ", " << FirstLine("uname -sr") << "; date " << FirstLine("date -u +%Y-%m-%dT%H:%MZ") << ".\n";
  std::cout << md.str();
  if (!out_path.empty()) std::ofstream(out_path) << md.str();
  return 0;
}
