// Batch latency of pinpointd on a simulated node: what a batch of N jobs that run at once pays
// on its way in (submit -> start) and on its way out (end -> the client hears of it), the part of
// a benchmark's makespan that is pinpoint's and not the jobs' own.
//
// Each batch: N trivial jobs (this binary in --job mode) are submitted on one connection, one
// "submit" each: sent back to back without waiting for the replies (--submit pipelined,
// Client::SubmitEach), or each after the reply to the one before (--submit serial). Each job prints
// CLOCK_REALTIME when its main starts, sleeps until an instant common to the batch, prints it again
// and exits, so all N end together, as N equal MPS jobs do. The client then learns of the ends
// either with one "wait" per job, one after another (--wait each, what every pinpointd answers), or
// with one "wait" for all of them (--wait all, "ids"). Times: CLOCK_REALTIME in every process;
// pinpointd's own stamps (submit_ms, start_ms, end_ms) come from the wait replies.
//
// Usage: batch_latency_bench --bin-dir build [--jobs 32] [--batches 5] [--wait each|all]
//                            [--submit pipelined|serial] [--poll-interval-ms MS] [--tmp DIR]
//                            [--label TEXT] [--out bench/results/batch_latency.md]
// --tmp: where pinpointd's state (its SQLite store, the job directories) goes (default /tmp); on
// a tmpfs (/dev/shm) fsync costs nothing and what is left is pinpointd's own work.
// --poll-interval-ms sets pinpointd's longest sleep (default 100): with 60000 the ends are still
// seen at once, since a job's end wakes the loop (SIGCHLD), not the poll tick.
// --out appends one row to the file (with the header and the explanation when it is new).
// Timings go to the report, never to a test's pass/fail.
#include <signal.h>
#include <sys/stat.h>
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
#include <thread>
#include <vector>

#include "bench_daemon.h"
#include "pinpoint/client.h"
#include "pinpoint/job.h"

namespace {

using pinpoint::bench::FirstLine;
using pinpoint::bench::Percentile;
using pinpoint::bench::Slurp;

int64_t NowUs() { return pinpoint::bench::RealtimeNs() / 1000; }

// --job END_US: the job. Prints its start, sleeps until END_US, prints its end.
int RunJob(int64_t end_us) {
  std::printf("start %lld\n", static_cast<long long>(NowUs()));
  std::fflush(stdout);
  int64_t left = end_us - NowUs();
  if (left > 0) std::this_thread::sleep_for(std::chrono::microseconds(left));
  std::printf("end %lld\n", static_cast<long long>(NowUs()));
  return 0;
}

// The value after `key ` in a job's stdout, or 0.
int64_t Stamp(const std::string& out, const std::string& key) {
  size_t at = out.find(key + " ");
  return at == std::string::npos ? 0 : std::atoll(out.c_str() + at + key.size() + 1);
}

// One batch's numbers, in ms.
struct BatchNumbers {
  double first_submit_to_last_received = 0;  // max(submit_ms) - t0
  double first_submit_to_last_exec = 0;      // max(job's start stamp) - t0
  double last_end_to_all_known = 0;          // time of the last wait reply - max(job's end stamp)
  std::vector<double> received_to_started;   // start_ms - submit_ms, per job
  std::vector<double> started_to_exec;       // job's start stamp - start_ms
  std::vector<double> end_to_noticed;        // end_ms - job's end stamp
  std::vector<double> end_to_known;          // when the client learnt of it - job's end stamp
  int late = 0;                              // jobs that started after the common end
};

double Median(std::vector<double> v) { return v.empty() ? 0 : Percentile(std::move(v), 50); }
double Max(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

std::string Cell(const std::vector<double>& v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f / %.1f", Median(v), Max(v));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--job") == 0) return RunJob(std::atoll(argv[2]));
  std::string bin_dir = "build", out_path, wait_mode = "each", submit_mode = "pipelined",
              label = "this tree";
  std::string tmp = "/tmp";
  int jobs = 32, batches = 5, poll_interval_ms = 100;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--bin-dir")
      bin_dir = argv[i + 1];
    else if (a == "--jobs")
      jobs = std::atoi(argv[i + 1]);
    else if (a == "--batches")
      batches = std::atoi(argv[i + 1]);
    else if (a == "--wait")
      wait_mode = argv[i + 1];
    else if (a == "--submit")
      submit_mode = argv[i + 1];
    else if (a == "--tmp")
      tmp = argv[i + 1];
    else if (a == "--label")
      label = argv[i + 1];
    else if (a == "--poll-interval-ms")
      poll_interval_ms = std::atoi(argv[i + 1]);
    else if (a == "--out")
      out_path = argv[i + 1];
  }
  if (jobs < 1 || batches < 1 || (wait_mode != "each" && wait_mode != "all") ||
      (submit_mode != "pipelined" && submit_mode != "serial")) {
    std::cerr << "batch_latency_bench: --jobs and --batches must be positive, --wait each or all, "
                 "--submit pipelined or serial\n";
    return 2;
  }
  std::string tmpl = tmp + "/pp-batch-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) return 1;
  std::string dir = tmpl, socket = dir + "/sock", config = dir + "/config.json";
  // Host CPUs enough that no job waits for one; no cgroups (not root): only pinpoint's own path.
  std::ofstream(config)
      << R"({"host_cpus": 65536, "cgroups": false, "metrics_listen": "", "poll_interval_ms": )"
      << poll_interval_ms << "}\n";
  std::string self = FirstLine("readlink -f /proc/" + std::to_string(::getpid()) + "/exe");
  pid_t daemon = pinpoint::bench::StartDaemon(bin_dir, dir, "simulated:h100x2", config);
  if (daemon < 0) {
    std::cerr << "batch_latency_bench: pinpointd did not start (" << dir << "/pinpointd.log)\n";
    return 1;
  }
  auto client = pinpoint::Client::Connect(socket);
  if (!client.ok()) return 1;
  std::vector<BatchNumbers> runs;
  for (int b = 0; b < batches; ++b) {
    BatchNumbers n;
    int64_t t0 = NowUs();
    // Long enough for every job to start first, even with slow fsyncs: a late one is counted.
    int64_t end_us = t0 + 1'000'000 + int64_t{jobs} * 60'000;
    pinpoint::JobRequest r;
    r.argv = {self, "--job", std::to_string(end_us)};
    r.cwd = "/";
    r.env = {{"PATH", "/usr/bin:/bin"}};
    r.gpus = 1;
    r.gpu_mem_bytes = 1ull << 30;
    std::vector<int64_t> ids;
    pinpoint::SubmitRequest one;
    one.request = r;
    std::vector<pinpoint::SubmitRequest> requests(static_cast<size_t>(jobs), one);
    std::vector<pinpoint::Result<pinpoint::SubmitReply>> replies;
    if (submit_mode == "pipelined") replies = client->SubmitEach(requests);
    for (size_t i = 0; submit_mode == "serial" && i < requests.size(); ++i)
      replies.push_back(client->Submit(requests[i]));
    for (const auto& reply : replies) {
      if (!reply.ok()) {
        std::cerr << "batch_latency_bench: submit: " << reply.status().message() << "\n";
        return 1;
      }
      ids.push_back(reply->job.id);
    }
    // One wait per job, or one for all ("ids"): the ended records and when each was known.
    std::vector<pinpoint::WaitRequest> waits;
    if (wait_mode == "each") {
      for (int64_t id : ids) waits.push_back(pinpoint::WaitRequest{id});
    } else {
      waits.push_back(pinpoint::WaitRequest{0, ids});
    }
    std::vector<pinpoint::JobView> ended;
    std::vector<int64_t> known_us;
    for (const pinpoint::WaitRequest& w : waits) {
      auto reply = client->Wait(w);
      if (!reply.ok()) {
        std::cerr << "batch_latency_bench: wait: " << reply.status().message() << "\n";
        return 1;
      }
      if (w.ids.empty())
        ended.push_back(reply->job);
      else
        ended.insert(ended.end(), reply->jobs.begin(), reply->jobs.end());
      known_us.resize(ended.size(), NowUs());
    }
    int64_t last_received_ms = 0, last_exec_us = 0, last_end_us = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      const pinpoint::JobView& j = ended.at(i);
      std::string out = Slurp(dir + "/state/jobs/" + std::to_string(ids[i]) + "/stdout");
      int64_t exec_us = Stamp(out, "start"), job_end_us = Stamp(out, "end");
      if (j.state != pinpoint::JobState::kCompleted || exec_us == 0 || job_end_us == 0) {
        std::cerr << "batch_latency_bench: job " << ids[i] << " did not run as it should\n";
        return 1;
      }
      if (exec_us > end_us) ++n.late;
      last_received_ms = std::max(last_received_ms, j.submit_ms);
      last_exec_us = std::max(last_exec_us, exec_us);
      last_end_us = std::max(last_end_us, job_end_us);
      n.received_to_started.push_back(static_cast<double>(j.start_ms - j.submit_ms));
      n.started_to_exec.push_back(static_cast<double>(exec_us - j.start_ms * 1000) / 1e3);
      n.end_to_noticed.push_back(static_cast<double>(j.end_ms * 1000 - job_end_us) / 1e3);
      n.end_to_known.push_back(static_cast<double>(known_us[i] - job_end_us) / 1e3);
    }
    n.first_submit_to_last_received = static_cast<double>(last_received_ms * 1000 - t0) / 1e3;
    n.first_submit_to_last_exec = static_cast<double>(last_exec_us - t0) / 1e3;
    n.last_end_to_all_known =
        static_cast<double>(*std::max_element(known_us.begin(), known_us.end()) - last_end_us) /
        1e3;
    runs.push_back(std::move(n));
  }
  ::kill(daemon, SIGTERM);
  pinpoint::WaitChild(daemon, 60'000);
  std::system(("rm -rf " + dir).c_str());

  // Batch numbers: the median over batches; job numbers: median / max over every job of every
  // batch.
  std::vector<double> received, exec, all_known, r2s, s2e, e2n, e2k;
  int late = 0;
  for (const BatchNumbers& n : runs) {
    received.push_back(n.first_submit_to_last_received);
    exec.push_back(n.first_submit_to_last_exec);
    all_known.push_back(n.last_end_to_all_known);
    r2s.insert(r2s.end(), n.received_to_started.begin(), n.received_to_started.end());
    s2e.insert(s2e.end(), n.started_to_exec.begin(), n.started_to_exec.end());
    e2n.insert(e2n.end(), n.end_to_noticed.begin(), n.end_to_noticed.end());
    e2k.insert(e2k.end(), n.end_to_known.begin(), n.end_to_known.end());
    late += n.late;
  }
  char row[1024];
  std::snprintf(
      row, sizeof(row), "| %s | %s | %s | %d x %d | %.1f | %.1f | %s | %s | %s | %s | %.1f |%s",
      label.c_str(), submit_mode.c_str(), wait_mode.c_str(), batches, jobs, Median(received),
      Median(exec), Cell(r2s).c_str(), Cell(s2e).c_str(), Cell(e2n).c_str(), Cell(e2k).c_str(),
      Median(all_known), late > 0 ? (" " + std::to_string(late) + " late").c_str() : "");
  std::string header =
      "| pinpointd | submit | wait | batches x jobs | first submit -> last received | first submit "
      "-> last exec | received -> started | started -> exec | end -> noticed | end -> known | last "
      "end -> all known |\n|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
  std::cout << header << row << "\n";
  if (!out_path.empty()) {
    struct stat st {};
    bool fresh = ::stat(out_path.c_str(), &st) != 0;
    std::ofstream out(out_path, std::ios::app);
    if (fresh) {
      out << "# Batch latency: submit -> start and end -> wait answered\n\n"
          << "`batch_latency_bench`: batches of trivial jobs (1 GiB slices) on a simulated h100x2 "
             "node, submitted on one connection (pipelined: sent back to back; serial: each after "
             "the reply to the one before); every job of a batch ends at "
             "the same instant, as N equal MPS jobs do. All times in ms, CLOCK_REALTIME in every "
             "process (pinpointd's stamps are whole ms). Batch columns: median over the batches. "
             "Job columns: median / max over every job of every batch.\n\n"
          << "- first submit -> last received: from just before the first `submit` to the last "
             "job's submit_ms\n"
          << "- first submit -> last exec: to the first instruction of the last job's main\n"
          << "- received -> started: submit_ms to start_ms (pinpointd places and records it)\n"
          << "- started -> exec: start_ms to the job's main (the start record, pinpoint-shim's "
             "fork/exec, its durable job.pid, the job's exec)\n"
          << "- end -> noticed: the job's last instruction to end_ms (the shim records the exit, "
             "pinpointd is woken and polls)\n"
          << "- end -> known / last end -> all known: to the moment the client holds the wait "
             "reply\n\n"
          << "Machine: " << FirstLine("nproc") << " CPUs,"
          << FirstLine("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2") << ", "
          << FirstLine("uname -sr") << ", " << FirstLine("df -T /tmp | awk 'NR==2{print $2}'")
          << " /tmp; shared with other builds, so fsync times vary.\n\n"
          << header;
    }
    out << row << " <!-- " << FirstLine("date -u +%Y-%m-%dT%H:%MZ") << " -->\n";
  }
  return 0;
}
