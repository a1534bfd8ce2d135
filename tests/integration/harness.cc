#include "integration/harness.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include "common/env_select.h"
#include "common/spawn.h"

extern char** environ;

namespace pinpoint::testing {

namespace {

// Every wait on a child has a deadline: a daemon or CLI that hangs fails its test, never hangs it.
constexpr int kReadyFd = 3;  // the daemon's end of the readiness pipe
constexpr int kDaemonStartMs = 120'000;
constexpr int kDaemonStopMs = 120'000;
constexpr int kCliMs = 240'000;

std::string ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  std::getline(in, text, '\0');
  return text.substr(0, 4096);
}

// The processes whose /proc/<pid>/stat names `parent` as their parent.
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    pid_t pid = static_cast<pid_t>(std::atol(entry.path().filename().c_str()));
    if (pid <= 0) continue;
    std::string stat = ReadSmallFile(entry.path().string() + "/stat");
    size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(paren + 1));
    std::string state;
    long ppid = 0;
    fields >> state >> ppid;
    if (ppid == parent) out.push_back(pid);
  }
  return out;
}

// Ends the jobs the daemon of `state_dir` started: they outlive pinpointd by design, so a test
// that leaves one running would leave its pinpoint-shim behind it. Each pinpoint-shim of this
// state directory is stopped first (it can start nothing more), then its job's process group and
// the shim itself are killed.
void EndJobsOf(const std::string& state_dir) {
  std::string jobs = state_dir + "/jobs/";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    pid_t shim = static_cast<pid_t>(std::atol(entry.path().filename().c_str()));
    if (shim <= 0) continue;
    std::string cmdline;
    {
      std::ifstream in(entry.path().string() + "/cmdline");
      std::getline(in, cmdline, '\n');
    }
    std::string argv0 = cmdline.substr(0, cmdline.find('\0'));
    std::string argv1 = cmdline.size() > argv0.size() + 1 ? cmdline.substr(argv0.size() + 1) : "";
    if (argv0.size() < 13 || argv0.compare(argv0.size() - 13, 13, "pinpoint-shim") != 0 ||
        argv1.rfind(jobs, 0) != 0)
      continue;
    ::kill(shim, SIGSTOP);
    for (pid_t job : ChildrenOf(shim)) {
      ::kill(-job, SIGKILL);
      ::kill(job, SIGKILL);
    }
    ::kill(shim, SIGKILL);
  }
}

// `pinpoint submit` names on stderr the variables it leaves out of a job, and these tests compare
// stderr: they run without the secret-like variables of whoever runs them (a CI token, say), so
// that every child (the CLI, the docs' shell sessions) starts from the same environment.
const bool kSecretLikeVariablesUnset = [] {
  std::vector<std::string> names;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    std::string name = kv.substr(0, kv.find('='));
    if (DeniedBy(name, DefaultEnvDeny())) names.push_back(name);
  }
  for (const auto& name : names) ::unsetenv(name.c_str());
  return true;
}();

}  // namespace

std::string BinDir() { return PINPOINT_BIN_DIR; }

ScopedEnv::ScopedEnv(const char* name, const std::string& value) : name_(name) {
  const char* old = std::getenv(name);
  if (old != nullptr) old_ = old, had_ = true;
  ::setenv(name, value.c_str(), 1);
}

ScopedEnv::~ScopedEnv() {
  if (had_)
    ::setenv(name_, old_.c_str(), 1);
  else
    ::unsetenv(name_);
}

Harness::Harness(std::string backend, std::string extra_config) {
  char tmpl[] = "/tmp/pp-it-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) std::abort();
  dir_ = tmpl;
  std::ofstream config(dir_ + "/config.json");
  config << "{\"state_dir\": \"" << dir_ << "/state\", \"socket_path\": \"" << dir_
         << "/sock\", \"backend\": \"" << backend
         << "\", \"host_cpus\": 512, \"metrics_listen\": \"127.0.0.1:0\""
         << (extra_config.empty() ? "" : ", " + extra_config) << "}\n";
}

Harness::~Harness() {
  if (daemon_pid_ > 0) KillDaemon();
  EndJobsOf(dir_ + "/state");
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void Harness::StartDaemon() {
  int ready[2];
  ASSERT_EQ(::pipe2(ready, O_CLOEXEC), 0);
  std::vector<std::string> argv = {BinDir() + "/pinpointd", "--config", dir_ + "/config.json",
                                   "--ready-fd", std::to_string(kReadyFd)};
  argv.insert(argv.end(), daemon_args_.begin(), daemon_args_.end());
  ++starts_;
  auto pid = Spawn({.argv = argv,
                    .out = SpawnStream::File(dir_ + "/pinpointd.log"),
                    .err_to_out = true,
                    .append_output = true,
                    .pass_fds = {{ready[1], kReadyFd}}});
  ::close(ready[1]);
  if (!pid.ok()) ::close(ready[0]);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  daemon_pid_ = *pid;
  // Ready, or end of file once the daemon died; its deadline is a failure, never a hang.
  pollfd p{ready[0], POLLIN, 0};
  int polled;
  while ((polled = ::poll(&p, 1, kDaemonStartMs)) < 0 && errno == EINTR) {
  }
  char buf[16] = {};
  ssize_t n = polled > 0 ? ::read(ready[0], buf, sizeof(buf)) : -1;
  ::close(ready[0]);
  if (n <= 0) KillDaemon();
  ASSERT_GT(n, 0) << (polled == 0 ? "pinpointd was not ready in time:\n"
                                  : "pinpointd did not start:\n")
                  << daemon_log();
}

void Harness::KillDaemon() {
  if (daemon_pid_ <= 0) return;
  ::kill(daemon_pid_, SIGKILL);
  EXPECT_TRUE(WaitChild(daemon_pid_, kDaemonStopMs).has_value()) << "pinpointd could not be reaped";
  daemon_pid_ = -1;
}

int Harness::StopDaemon() {
  if (daemon_pid_ <= 0) return -1;
  ::kill(daemon_pid_, SIGTERM);
  std::optional<int> status = WaitChild(daemon_pid_, kDaemonStopMs);
  daemon_pid_ = -1;
  EXPECT_TRUE(status.has_value()) << "pinpointd did not stop on SIGTERM: killed";
  return status.value_or(-1);
}

CliResult Harness::Cli(const std::vector<std::string>& args,
                       const std::optional<std::string>& input) const {
  static std::atomic<int> counter{0};
  std::string out_path = dir_ + "/cli-" + std::to_string(++counter);
  if (input) {
    std::ofstream(out_path + ".in") << *input;
  }
  std::vector<std::string> argv = {BinDir() + "/pinpoint"};
  argv.insert(argv.end(), args.begin(), args.end());
  CliResult r;
  auto pid = Spawn({.argv = argv,
                    .env = EnvironmentWith("PINPOINT_SOCKET", socket()),
                    .in = input ? SpawnStream::File(out_path + ".in") : SpawnStream{},
                    .out = SpawnStream::File(out_path + ".out"),
                    .err = SpawnStream::File(out_path + ".err")});
  if (!pid.ok()) {
    ADD_FAILURE() << pid.status().ToString();
    return r;
  }
  std::optional<int> status = WaitChild(*pid, kCliMs);
  if (!status) {
    ADD_FAILURE() << "pinpoint " << (args.empty() ? "" : args[0])
                  << " ran past its deadline: killed";
    r.exit_code = kCliTimedOut;
  } else {
    r.exit_code = WIFEXITED(*status) ? WEXITSTATUS(*status) : 128 + WTERMSIG(*status);
  }
  r.out = Slurp(out_path + ".out");
  r.err = Slurp(out_path + ".err");
  return r;
}

std::string Harness::daemon_log() const { return Slurp(dir_ + "/pinpointd.log"); }

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int CountLines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace pinpoint::testing
