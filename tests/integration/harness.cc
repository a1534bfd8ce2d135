#include "integration/harness.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>

#include "common/env_select.h"

extern char** environ;

namespace pinpoint::testing {

namespace {

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
    if (argv0.size() < 13 || argv0.compare(argv0.size() - 13, 13, "pinpoint-shim") != 0 || argv1.rfind(jobs, 0) != 0)
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
  if (had_) ::setenv(name_, old_.c_str(), 1);
  else ::unsetenv(name_);
}

Harness::Harness(std::string backend, std::string extra_config) {
  char tmpl[] = "/tmp/pp-it-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) std::abort();
  dir_ = tmpl;
  std::ofstream config(dir_ + "/config.json");
  config << "{\"state_dir\": \"" << dir_ << "/state\", \"socket_path\": \"" << dir_
         << "/sock\", \"backend\": \"" << backend << "\", \"host_cpus\": 512, \"metrics_listen\": \"127.0.0.1:0\""
         << (extra_config.empty() ? "" : ", " + extra_config) << "}\n";
}

Harness::~Harness() {
  if (daemon_pid_ > 0) KillDaemon();
  EndJobsOf(dir_ + "/state");
  std::system(("rm -rf " + dir_).c_str());
}

void Harness::StartDaemon() {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  std::string log = dir_ + "/pinpointd.log";
  std::string fd_arg = std::to_string(ready[1]);
  std::string binary = BinDir() + "/pinpointd";
  std::string config = dir_ + "/config.json";
  std::vector<std::string> args = {binary, "--config", config, "--ready-fd", fd_arg};
  args.insert(args.end(), daemon_args_.begin(), daemon_args_.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ++starts_;
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(ready[0]);
    int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(ready[1]);
  char buf[16] = {};
  ssize_t n = ::read(ready[0], buf, sizeof(buf));  // blocks until ready or the daemon died
  ::close(ready[0]);
  daemon_pid_ = pid;
  ASSERT_GT(n, 0) << "pinpointd did not start:\n" << daemon_log();
}

void Harness::KillDaemon() {
  if (daemon_pid_ <= 0) return;
  ::kill(daemon_pid_, SIGKILL);
  ::waitpid(daemon_pid_, nullptr, 0);
  daemon_pid_ = -1;
}

int Harness::StopDaemon() {
  if (daemon_pid_ <= 0) return -1;
  ::kill(daemon_pid_, SIGTERM);
  int status = 0;
  ::waitpid(daemon_pid_, &status, 0);
  daemon_pid_ = -1;
  return status;
}

CliResult Harness::Cli(const std::vector<std::string>& args, const std::optional<std::string>& input) const {
  static int counter = 0;
  std::string out_path = dir_ + "/cli-" + std::to_string(++counter);
  if (input) {
    std::ofstream(out_path + ".in") << *input;
  }
  std::string binary = BinDir() + "/pinpoint";
  std::string sock = socket();
  pid_t pid = ::fork();
  if (pid == 0) {
    int out = ::open((out_path + ".out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = ::open((out_path + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, 1);
    ::dup2(err, 2);
    int in = ::open(input ? (out_path + ".in").c_str() : "/dev/null", O_RDONLY);
    ::dup2(in, 0);
    ::setenv("PINPOINT_SOCKET", sock.c_str(), 1);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(binary.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  CliResult r;
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = Slurp(out_path + ".out");
  r.err = Slurp(out_path + ".err");
  return r;
}

std::string Harness::daemon_log() const { return Slurp(dir_ + "/pinpointd.log"); }

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int CountLines(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

}  // namespace pinpoint::testing
