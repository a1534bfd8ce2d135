#include "cli/submit_wait.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "pinpoint/client.h"
#include "pinpoint/escape.h"

namespace pinpoint::cli {

namespace {

// SIGINT and SIGTERM held back from the whole process for the scope, readable through fd().
class BlockedSignals {
 public:
  BlockedSignals() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &set_, &old_);
    fd_ = ::signalfd(-1, &set_, SFD_CLOEXEC);
  }
  ~BlockedSignals() {
    if (fd_ >= 0) ::close(fd_);
    ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  BlockedSignals(const BlockedSignals&) = delete;
  BlockedSignals& operator=(const BlockedSignals&) = delete;
  int fd() const { return fd_; }
  // The signal read, or 0.
  int Read() const {
    signalfd_siginfo info{};
    ssize_t n = ::read(fd_, &info, sizeof(info));
    return n == sizeof(info) ? static_cast<int>(info.ssi_signo) : 0;
  }

 private:
  sigset_t set_{}, old_{};
  int fd_ = -1;
};

}  // namespace

Result<WaitOutcome> WaitCancellingOnSignal(const std::string& socket, JobId id, std::ostream& err,
                                           const std::string& first_line) {
  BlockedSignals signals;  // before the thread starts: it inherits the mask
  if (!first_line.empty()) err << first_line << std::endl;
  if (signals.fd() < 0) return Internal("signalfd: " + std::string(std::strerror(errno)));
  auto client = Client::Connect(socket);
  if (!client.ok()) return client.status();
  int done[2];
  if (::pipe2(done, O_CLOEXEC) != 0) return Internal("pipe: " + std::string(std::strerror(errno)));
  Result<WaitReply> reply = Unavailable("not waited");
  std::thread waiter([&] {
    reply = client->Wait(WaitRequest{id});
    char byte = 1;
    ssize_t ignored = ::write(done[1], &byte, 1);
    (void)ignored;
  });
  WaitOutcome outcome;
  bool left = false;
  while (true) {
    pollfd fds[2] = {{done[0], POLLIN, 0}, {signals.fd(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents != 0) break;
    if (fds[1].revents == 0) continue;
    int sig = signals.Read();
    if (sig == 0) continue;
    if (outcome.signal != 0) {
      err << "pinpoint: left without waiting; job " << id << " is being cancelled (pinpoint wait " << id << ")\n";
      left = true;
      client->Interrupt();
      break;
    }
    outcome.signal = sig;
    err << "pinpoint: " << (sig == SIGINT ? "interrupted" : "terminated") << ": cancelling job " << id
        << " (again to leave without waiting)\n";
    auto cancel = Client::Connect(socket);
    Result<CancelReply> cancelled = cancel.ok() ? cancel->Cancel(CancelRequest{{id}}) : Result<CancelReply>(cancel.status());
    Status s = cancelled.ok() ? cancelled->results.at(0).status : cancelled.status();
    if (!s.ok() && s.code() != Code::kFailedPrecondition)  // kFailedPrecondition: it already ended
      err << "pinpoint: cannot cancel job " << id << ": " << EscapeForTerminal(s.message()) << "\n";
  }
  waiter.join();
  ::close(done[0]);
  ::close(done[1]);
  if (left) return outcome;
  if (!reply.ok()) return reply.status();
  outcome.job = std::move(reply->job);
  return outcome;
}

int SubmitWaitExitCode(const WaitOutcome& outcome) {
  if (outcome.signal != 0 && (!outcome.job || outcome.job->state == JobState::kCancelled))
    return 128 + outcome.signal;
  if (!outcome.job) return 1;
  return outcome.job->exit_code.value_or(1);
}

}  // namespace pinpoint::cli
