// The CLI against a real daemon on a simulated node: errors are one line with a distinct exit
// code, and a daemon survives malformed input.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "common/version.h"
#include "integration/harness.h"

namespace pinpoint::testing {
namespace {

using nlohmann::json;

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override { h_.StartDaemon(); }
  Harness h_{"simulated:h100x2", "\"cancel_grace_ms\": 2000"};
};

TEST(CliNoDaemonTest, UnreachableDaemonIsExitThree) {
  Harness h;
  auto r = h.Cli({"queue"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(CountLines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("pinpointd is not running"), std::string::npos) << r.err;
}

TEST_F(CliTest, BadInputIsOneLineAndDistinctExitCodes) {
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    const char* message;
  } cases[] = {
      {{"submit", "--gpu-mem", "4X", "--", "true"}, 2, "invalid size '4X'"},
      {{"submit", "--gpu-mem", "4G", "--gpu-share", "150%", "--", "true"}, 2, "invalid percentage"},
      {{"submit", "--gpu-share", "20%", "--", "true"}, 2, "--gpu-share needs --gpu-mem"},
      {{"submit", "--gpus", "3", "--", "true"}, 6, "needs 3 whole GPUs, this node has 2"},
      {{"submit", "--gpu-mem", "100G", "--", "true"}, 6, "100GiB"},
      {{"submit"}, 2, "command"},
      {{"submit", "--device", "5", "--gpu-mem", "1G", "--", "true"},
       6,
       "needs GPU 5, this node has 2 devices"},
      {{"submit", "--device", "0,0", "--", "true"}, 2, "devices must be distinct"},
      {{"submit", "--device", "1,x", "--", "true"}, 2, "invalid --device '1,x'"},
      {{"submit", "--gpus", "2", "--device", "1", "--", "true"}, 2, "one device per GPU"},
      {{"show", "999"}, 4, "no job 999"},
      {{"show", "abc"}, 2, "abc"},
      {{"frobnicate"}, 2, "frobnicate"},
      // Lines that point the right way (issue 27).
      {{"submit", "--gpus=abc", "--", "true"},
       2,
       "--gpus: 'abc' is not a GPU count (N or TYPE:N, N at most 1024)"},
      {{"submit", "--gpus", "2000", "--", "true"},
       2,
       "--gpus: '2000' is not a GPU count (N or TYPE:N, N at most 1024)"},
      {{"submit", "--gpu-mem", "4", "GB", "--", "true"},
       2,
       "a size is one word: write 4GB, not 4 GB"},
      {{"--socket", "/tmp", "queue"}, 2, "/tmp is a directory, not pinpointd's socket"},
  };
  for (const auto& c : cases) {
    auto r = h_.Cli(c.args);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args[0] << ": " << r.err;
    EXPECT_EQ(CountLines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    // A mistake in the command line is told by the subcommand that read it.
    bool prefixed =
        r.err.rfind("pinpoint: ", 0) == 0 || r.err.rfind("pinpoint " + c.args[0] + ": ", 0) == 0;
    EXPECT_TRUE(prefixed) << r.err;
  }
}

// Stands in for pinpointd: reads one request per connection and writes what `answer` says for
// it (connections counted from 0): a reply line, or nothing (the reply is lost). Records every
// request it read.
class ScriptedDaemon {
 public:
  using Answer = std::function<std::optional<std::string>(int conn, const json& request)>;
  ScriptedDaemon(const std::string& socket, Answer answer)
      : socket_(socket), answer_(std::move(answer)) {
    listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr = Address();
    bool listening = ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                     ::listen(listener_, 8) == 0;
    EXPECT_TRUE(listening) << std::strerror(errno);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ScriptedDaemon() {
    if (thread_.joinable()) Stop();
  }
  // Stops serving (a connection of its own wakes the accept) and returns the requests read.
  std::vector<json> Stop() {
    stop_ = true;
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr = Address();
    (void)::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::close(fd);
    thread_.join();
    ::close(listener_);
    return requests_;
  }

 private:
  sockaddr_un Address() const {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket_.c_str(), sizeof(addr.sun_path) - 1);
    return addr;
  }
  void Serve() {
    for (int conn = 0;; ++conn) {
      int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0 || stop_) {
        if (fd >= 0) ::close(fd);
        return;
      }
      std::string line;
      char c;
      while (::recv(fd, &c, 1, 0) == 1 && c != '\n') line += c;
      requests_.push_back(json::parse(line, nullptr, /*allow_exceptions=*/false));
      if (auto reply = answer_(conn, requests_.back())) {
        std::string text = *reply + "\n";
        (void)::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
      }
      ::close(fd);
    }
  }

  std::string socket_;
  Answer answer_;
  int listener_ = -1;
  std::atomic<bool> stop_ = false;
  std::vector<json> requests_;  // written by the thread, read after join
  std::thread thread_;
};

TEST(CliRetryTest, SubmitWhoseReplyWasLostIsRetriedOnceWithItsKey) {
  Harness h;
  // Drops the first connection after reading its request, answers the others with job 7, 8, ...
  ScriptedDaemon daemon(h.socket(), [](int conn, const json&) -> std::optional<std::string> {
    if (conn == 0) return std::nullopt;
    return json{{"ok", true}, {"job", {{"id", 6 + conn}}}}.dump();
  });
  auto first = h.Cli({"submit", "--", "true"});
  auto second = h.Cli({"submit", "--", "true"});
  std::vector<json> requests = daemon.Stop();

  EXPECT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, "submitted job 7\n");
  EXPECT_EQ(second.out, "submitted job 8\n");
  ASSERT_EQ(requests.size(), 3u);
  for (const json& r : requests) {
    ASSERT_TRUE(r.contains("idempotency_key")) << r.dump();
    EXPECT_GE(r["idempotency_key"].get<std::string>().size(), 32u);
  }
  EXPECT_EQ(requests[1]["idempotency_key"], requests[0]["idempotency_key"]) << "the retry";
  EXPECT_NE(requests[2]["idempotency_key"], requests[0]["idempotency_key"]) << "a new invocation";
  EXPECT_EQ(requests[1]["request"], requests[0]["request"]);
}

// Whatever a daemon answers, the CLI prints one line and exits non-zero for a reply it cannot
// read: it never crashes or prints half a listing.
TEST(CliMalformedReplyTest, EachIsOneErrorLine) {
  struct Case {
    std::vector<std::string> args;
    std::string reply;
    const char* message;
  } cases[] = {
      {{"show", "1"},
       R"({"ok":true})",
       "malformed reply from pinpointd to show: reply.job is missing"},
      {{"show", "1"}, R"({"ok":true,"job":{"state":7}})", "job.state must be a string"},
      {{"show", "1"}, R"({"ok":true,"job":{"exit_code":"0"}})", "job.exit_code must be an integer"},
      {{"submit", "--", "true"}, R"({"ok":true,"job":[]})", "job must be a JSON object"},
      {{"queue"},
       R"({"ok":true,"jobs":[{"request":{"argv":"ls"}}]})",
       "request.argv must be an array of strings"},
      {{"gpus"},
       R"({"ok":true,"devices":[{"jobs":[{"id":"x"}]}]})",
       "device job.id must be an integer"},
      {{"cancel", "1"},
       R"({"ok":true,"results":[{"id":1,"ok":false,"error":7}]})",
       "unknown error"},
      {{"logs", "1"}, R"({"ok":true,"data":null})", "reply.data is missing"},
      {{"wait", "1"}, R"({"ok":"yes"})", "unknown error"},
      {{"version"}, R"({"ok":false,"error":{"code":"ok","message":"all fine"}})", "all fine"},
      {{"report"},
       R"({"ok":true,"jobs":[{"usage":{"samples":-1.5}}]})",
       "usage.samples must be an integer"},
      {{"top", "-c", "1"}, R"([1,2])", "not a JSON object"},
  };
  for (const auto& c : cases) {
    Harness h;
    ScriptedDaemon daemon(h.socket(),
                          [&](int, const json&) { return std::optional<std::string>(c.reply); });
    auto r = h.Cli(c.args);
    daemon.Stop();
    EXPECT_NE(r.exit_code, 0) << c.args[0] << " " << c.reply;
    EXPECT_LT(r.exit_code, 128) << "killed by a signal: " << c.reply;
    EXPECT_EQ(CountLines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind("pinpoint: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.reply << " -> " << r.err;
  }
}

TEST_F(CliTest, DeviceChosenByABatchSystemIsTheOneUsed) {
  auto gj = h_.Cli({"--json", "gpus"});
  std::string uuid1 = json::parse(gj.out)["devices"][1]["uuid"];
  // Best fit alone would take GPU 0 (the lower index) for both.
  for (const char* device : {"1", "1"}) {
    auto run = h_.Cli({"submit", "--wait", "--device", device, "--gpu-mem", "1G", "--", "sh", "-c",
                       "echo visible=$CUDA_VISIBLE_DEVICES"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
  }
  auto whole = h_.Cli({"submit", "--wait", "--device", "1", "--", "sh", "-c",
                       "echo visible=$CUDA_VISIBLE_DEVICES"});
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  for (const char* id : {"1", "2", "3"}) {
    EXPECT_EQ(h_.Cli({"logs", id}).out, "visible=" + uuid1 + "\n") << "job " << id;
  }
}

TEST_F(CliTest, LogsAndJsonListings) {
  auto run = h_.Cli({"submit", "--wait", "--gpu-mem", "2G", "--", "sh", "-c",
                     "echo visible=$CUDA_VISIBLE_DEVICES limit=$CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto logs = h_.Cli({"logs", "1"});
  EXPECT_EQ(logs.out.rfind("visible=GPU-", 0), 0u) << logs.out;
  EXPECT_NE(logs.out.find("limit=0=2048M"), std::string::npos) << logs.out;
  auto q = h_.Cli({"--json", "queue", "--all"});
  json jobs = json::parse(q.out);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0]["state"], "completed");
  auto gpus = h_.Cli({"gpus"});
  EXPECT_NE(gpus.out.find("SIMULATED"), std::string::npos) << gpus.out;
  auto gj = h_.Cli({"--json", "gpus"});
  EXPECT_EQ(json::parse(gj.out)["devices"].size(), 2u);
}

TEST_F(CliTest, CancelRunningJob) {
  auto sub = h_.Cli({"submit", "--gpu-mem", "1G", "--", "sleep", "1000"});
  ASSERT_EQ(sub.exit_code, 0) << sub.err;
  auto cancel = h_.Cli({"cancel", "1"});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_EQ(cancel.out, "cancelled job 1\n");
  auto wait = h_.Cli({"wait", "1"});
  EXPECT_EQ(wait.exit_code, 1);
  EXPECT_NE(wait.out.find("cancelled"), std::string::npos) << wait.out;
  auto again = h_.Cli({"cancel", "1"});
  EXPECT_EQ(again.exit_code, 6);
  EXPECT_NE(again.err.find("already ended"), std::string::npos) << again.err;
}

TEST_F(CliTest, DaemonSurvivesMalformedMessages) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, h_.socket().c_str());
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  for (const char* msg : {"garbage\n", "{\"op\":\"submit\",\"request\":{\"gpus\":\"x\"}}\n",
                          "{\"op\":\"submit\",\"request\":{\"argv\":[\"true\"],\"cwd\":\"/"
                          "\",\"gpus\":99999999999}}\n",
                          "{\"op\":\"cancel\",\"ids\":[-1]}\n", "{\"op\":\"nope\"}\n"}) {
    ASSERT_GT(::send(fd, msg, std::strlen(msg), 0), 0);
    char buf[4096] = {};
    ssize_t n = ::recv(fd, buf, sizeof(buf) - 1, 0);
    ASSERT_GT(n, 0);
    EXPECT_NE(std::string(buf).find("\"ok\":false"), std::string::npos) << msg << " -> " << buf;
  }
  ::close(fd);
  auto v = h_.Cli({"version"});
  EXPECT_EQ(v.exit_code, 0) << v.err;
  // The daemon's line names its build as the client's does: after an upgrade, which one runs.
  EXPECT_NE(v.out.find(std::string("\npinpointd ") + VersionText() + " (backend "),
            std::string::npos)
      << v.out;
}

}  // namespace
}  // namespace pinpoint::testing

namespace pinpoint::testing {
namespace {

// Raw protocol exchange: sends `lines`, shuts down writing, returns everything read back.
std::string Exchange(const std::string& socket, const std::string& lines) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, socket.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return "";
  ::send(fd, lines.data(), lines.size(), 0);
  ::shutdown(fd, SHUT_WR);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

TEST_F(CliTest, RequestFollowedByHalfCloseIsStillAnswered) {
  for (int i = 0; i < 20; ++i) {
    std::string reply = Exchange(h_.socket(), "{\"op\":\"version\"}\n");
    ASSERT_NE(reply.find("\"ok\":true"), std::string::npos) << "round " << i << ": " << reply;
  }
}

TEST_F(CliTest, BadWaitValueStoresNoJob) {
  std::string reply = Exchange(
      h_.socket(),
      "{\"op\":\"submit\",\"wait\":\"yes\",\"request\":{\"argv\":[\"true\"],\"cwd\":\"/\"}}\n");
  EXPECT_NE(reply.find("invalid_argument"), std::string::npos) << reply;
  auto q = h_.Cli({"--json", "queue", "--all"});
  EXPECT_EQ(nlohmann::json::parse(q.out).size(), 0u);
}

TEST_F(CliTest, WaitOnAJobCancelledWhilePendingReturns) {
  ASSERT_EQ(h_.Cli({"submit", "--gpus", "2", "--", "sleep", "1000"}).exit_code, 0);
  ASSERT_EQ(h_.Cli({"submit", "--gpus", "2", "--", "true"}).exit_code, 0);  // pending behind 1
  ASSERT_EQ(h_.Cli({"cancel", "2"}).exit_code, 0);
  auto wait = h_.Cli({"wait", "2"});
  EXPECT_EQ(wait.exit_code, 1);
  EXPECT_NE(wait.out.find("cancelled"), std::string::npos) << wait.out;
  ASSERT_EQ(h_.Cli({"cancel", "1"}).exit_code, 0);
  EXPECT_NE(h_.Cli({"wait", "1"}).out.find("cancelled"), std::string::npos);
}

}  // namespace
}  // namespace pinpoint::testing
