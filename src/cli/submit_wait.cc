#include "cli/submit_wait.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "cli/job_arrays.h"
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

namespace {

// Waits for `ids` in order on one connection; a first signal sends `cancel` (of the job, or of
// the array: named `what` for people, "job 7", "array 12") and the wait goes on, a second leaves.
Result<WaitOutcome> WaitCancelling(const std::string& socket, const std::vector<JobId>& ids,
                                   const CancelRequest& cancel, const std::string& what,
                                   std::ostream& err, const std::string& first_line) {
  JobId cancel_id = cancel.ids.empty() ? cancel.arrays.front() : cancel.ids.front();
  BlockedSignals signals;  // before the thread starts: it inherits the mask
  if (!first_line.empty()) err << first_line << std::endl;
  if (signals.fd() < 0) return Internal("signalfd: " + std::string(std::strerror(errno)));
  auto client = Client::Connect(socket);
  if (!client.ok()) return client.status();
  int done[2];
  if (::pipe2(done, O_CLOEXEC) != 0) return Internal("pipe: " + std::string(std::strerror(errno)));
  Status waited = Unavailable("not waited");
  std::vector<JobView> ended;
  std::thread waiter([&] {
    auto jobs = WaitForJobs(*client, ids);
    if (jobs.ok()) ended = std::move(jobs).value();
    waited = jobs.status();
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
      err << "pinpoint: left without waiting; " << what << " is being cancelled (pinpoint wait "
          << cancel_id << ")\n";
      left = true;
      client->Interrupt();
      break;
    }
    outcome.signal = sig;
    err << "pinpoint: " << (sig == SIGINT ? "interrupted" : "terminated") << ": cancelling " << what
        << " (again to leave without waiting)\n";
    auto connection = Client::Connect(socket);
    Result<CancelReply> cancelled =
        connection.ok() ? connection->Cancel(cancel) : Result<CancelReply>(connection.status());
    Status s = cancelled.ok() ? cancelled->results.at(0).status : cancelled.status();
    if (!s.ok() && s.code() != Code::kFailedPrecondition)  // kFailedPrecondition: it already ended
      err << "pinpoint: cannot cancel " << what << ": " << EscapeForTerminal(s.message()) << "\n";
  }
  waiter.join();
  ::close(done[0]);
  ::close(done[1]);
  if (left) return outcome;
  if (!waited.ok()) return waited;
  outcome.tasks = std::move(ended);
  return outcome;
}

}  // namespace

Result<WaitOutcome> WaitCancellingOnSignal(const std::string& socket, JobId id, std::ostream& err,
                                           const std::string& first_line) {
  auto outcome = WaitCancelling(socket, {id}, CancelRequest{{id}}, "job " + std::to_string(id), err,
                                first_line);
  if (!outcome.ok() || outcome->tasks.empty()) return outcome;
  outcome->job = std::move(outcome->tasks.front());
  outcome->tasks.clear();
  return outcome;
}

Result<WaitOutcome> WaitArrayCancellingOnSignal(const std::string& socket, JobId array_id,
                                                int count, std::ostream& err,
                                                const std::string& first_line) {
  return WaitCancelling(socket, ArrayJobIds(array_id, count), CancelRequest{{}, {array_id}},
                        "array " + std::to_string(array_id), err, first_line);
}

int SubmitWaitExitCode(const WaitOutcome& outcome) {
  if (!outcome.tasks.empty()) {
    bool cancelled = false;
    int code = 0;
    for (const JobView& task : outcome.tasks) {
      cancelled = cancelled || task.state == JobState::kCancelled;
      if (task.state != JobState::kCompleted)
        code = std::max({code, task.exit_code.value_or(1), 1});
    }
    return outcome.signal != 0 && cancelled ? 128 + outcome.signal : code;
  }
  if (outcome.signal != 0 && (!outcome.job || outcome.job->state == JobState::kCancelled))
    return 128 + outcome.signal;
  if (!outcome.job) return 1;
  return outcome.job->exit_code.value_or(1);
}

}  // namespace pinpoint::cli
