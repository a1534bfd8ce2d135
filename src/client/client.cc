#include "pinpoint/client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "pinpoint/api_codec.h"
#include "pinpoint/rewrite_budget.h"

namespace pinpoint {

std::string DefaultSocketPath() {
  const char* env = std::getenv("PINPOINT_SOCKET");
  if (env != nullptr && *env != '\0') return env;
  return "/run/pinpoint/pinpointd.sock";
}

Result<Client> Client::Connect(const std::string& socket_path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(addr.sun_path))
    return InvalidArgument("socket path is too long: " + socket_path);
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Unavailable(std::string("socket: ") + std::strerror(errno));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int err = errno;
    ::close(fd);
    struct stat st {};
    if (::stat(socket_path.c_str(), &st) == 0 && !S_ISSOCK(st.st_mode)) {
      // Said as it is: a socket option naming a directory or a plain file is a typo, not a daemon
      // down.
      return InvalidArgument(
          socket_path + (S_ISDIR(st.st_mode) ? " is a directory" : " is a file") +
          ", not pinpointd's socket: --socket (or PINPOINT_SOCKET) names the socket file, "
          "e.g. /run/pinpoint/pinpointd.sock");
    }
    return Unavailable("pinpointd is not running at " + socket_path + " (" + std::strerror(err) +
                       "); start it or set PINPOINT_SOCKET");
  }
  return Client(fd);
}

void Client::Interrupt() {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

Client::Client(Client&& other) noexcept : fd_(other.fd_), buffer_(std::move(other.buffer_)) {
  other.fd_ = -1;
}

Client& Client::operator=(Client&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    buffer_ = std::move(other.buffer_);
    other.fd_ = -1;
  }
  return *this;
}

Client::~Client() {
  if (fd_ >= 0) ::close(fd_);
}

Result<nlohmann::json> Client::Call(const nlohmann::json& request) {
  std::string line = request.dump() + "\n";
  if (line.size() > kMaxMessageBytes + 1) return InvalidArgument("request is larger than 1 MiB");
  size_t sent = 0;
  while (sent < line.size()) {
    ssize_t n = ::send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = std::strerror(errno);
      // A daemon that refused the connection (too many connections) wrote why before closing.
      auto refusal = ReadRefusal();
      if (refusal) return *refusal;
      return Unavailable("lost connection to pinpointd: " + why);
    }
    sent += static_cast<size_t>(n);
  }
  size_t newline;
  size_t scanned = 0;  // a large reply arrives in many reads: look at each byte once
  while ((newline = buffer_.find('\n', scanned)) == std::string::npos) {
    scanned = buffer_.size();
    if (buffer_.size() > kMaxMessageBytes * 64)
      return Unavailable("reply from pinpointd is too large");
    char buf[65536];
    ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Unavailable("pinpointd closed the connection before replying");
    buffer_.append(buf, static_cast<size_t>(n));
  }
  std::string reply_text = buffer_.substr(0, newline);
  buffer_.erase(0, newline + 1);
  return ParseReplyLine(reply_text);
}

template <typename Request>
Result<typename Request::Reply> Client::Send(const Request& request) {
  auto reply = Call(ToJson(request));
  if (!reply.ok()) return reply.status();
  return DecodeReply<Request>(*reply);
}

Result<VersionReply> Client::Version() { return Send(VersionRequest{}); }
Result<SubmitReply> Client::Submit(const SubmitRequest& request) { return Send(request); }

Result<ShowReply> Client::Show(const ShowRequest& request) { return Send(request); }

Result<QueueReply> Client::Queue(const QueueRequest& request) {
  int wanted = request.limit == 0 ? kQueueDefaultLimit : request.limit;
  QueueRequest page = request;
  page.limit = std::min(wanted, kQueuePageMax);
  auto reply = Send(page);
  if (!reply.ok() || wanted <= kQueuePageMax) return reply;
  QueueReply all = std::move(reply).value();
  // Jobs that come or go between pages shift them by a few: a job may be seen twice (kept once)
  // or missed, as with any listing of a moving queue.
  while (all.more > 0 && static_cast<int>(all.jobs.size()) < wanted) {
    int64_t offset = int64_t{request.offset} + static_cast<int64_t>(all.jobs.size());
    if (offset > kQueueMaxOffset) break;
    page.offset = static_cast<int>(offset);
    page.limit = std::min(kQueuePageMax, wanted - static_cast<int>(all.jobs.size()));
    auto next = Send(page);
    if (!next.ok()) return next.status();
    if (next->jobs.empty()) break;
    for (auto& job : next->jobs) all.jobs.push_back(std::move(job));
    all.total = next->total;
    all.more = next->more;
    all.more_tasks = next->more_tasks;
  }
  // Pages of `all` run from the newest back, each in ascending order: the listing is ascending.
  std::stable_sort(all.jobs.begin(), all.jobs.end(),
                   [](const JobView& a, const JobView& b) { return a.id < b.id; });
  all.jobs.erase(std::unique(all.jobs.begin(), all.jobs.end(),
                             [](const JobView& a, const JobView& b) { return a.id == b.id; }),
                 all.jobs.end());
  all.offset = request.offset;
  all.limit = wanted;
  return all;
}

namespace {

// A list of ids in requests of at most kCancelMaxIds: `make(from, to)` builds the request of
// the ids [from, to), `send` sends it. The results are concatenated in order; the first error
// stops (requests already answered have taken effect). The ids a reply answers NotReached (the
// request's rewrites were spent, pinpoint/rewrite_budget.h) are sent again; the daemon does at
// least one each time.
template <typename Reply, typename Make, typename SendFn>
Result<Reply> InPieces(size_t count, Make make, SendFn send) {
  Reply all;
  size_t from = 0;
  do {
    size_t to = std::min(count, from + kCancelMaxIds);
    auto reply = send(make(from, to));
    if (!reply.ok()) return reply.status();
    size_t done = 0;
    for (auto& result : reply->results) {
      if (IsNotReached(result.status) && done > 0) break;
      all.results.push_back(std::move(result));
      ++done;
    }
    from += std::max<size_t>(done, 1);
  } while (from < count);
  return all;
}

std::vector<JobId> Slice(const std::vector<JobId>& ids, size_t from, size_t to) {
  from = std::min(from, ids.size());
  to = std::min(to, ids.size());
  return {ids.begin() + static_cast<std::ptrdiff_t>(from),
          ids.begin() + static_cast<std::ptrdiff_t>(to)};
}

// cancel, hold and release: ids first, then arrays, as the daemon answers them; pieces keep that
// order.
template <typename Request, typename SendFn>
Result<typename Request::Reply> IdsAndArraysInPieces(const Request& request, SendFn send) {
  size_t n = request.ids.size();
  return InPieces<typename Request::Reply>(
      n + request.arrays.size(),
      [&](size_t from, size_t to) {
        Request piece;
        piece.ids = Slice(request.ids, from, to);
        piece.arrays = Slice(request.arrays, from < n ? 0 : from - n, to < n ? 0 : to - n);
        return piece;
      },
      send);
}

}  // namespace

Result<WaitReply> Client::Wait(const WaitRequest& request) {
  if (request.ids.size() <= kWaitMaxIds) return Send(request);
  // All of them have ended once each piece has: the pieces are waited for one after another.
  WaitReply all;
  for (size_t from = 0; from < request.ids.size(); from += kWaitMaxIds) {
    WaitRequest piece;
    piece.ids = Slice(request.ids, from, from + kWaitMaxIds);
    auto reply = Send(piece);
    if (!reply.ok()) return reply.status();
    for (auto& job : reply->jobs) all.jobs.push_back(std::move(job));
  }
  return all;
}

Result<CancelReply> Client::Cancel(const CancelRequest& request) {
  return IdsAndArraysInPieces(request, [this](const CancelRequest& piece) { return Send(piece); });
}
Result<HoldReply> Client::Hold(const HoldRequest& request) {
  return IdsAndArraysInPieces(request, [this](const HoldRequest& piece) { return Send(piece); });
}
Result<ReleaseReply> Client::Release(const ReleaseRequest& request) {
  return IdsAndArraysInPieces(request, [this](const ReleaseRequest& piece) { return Send(piece); });
}
Result<SuspendReply> Client::Suspend(const SuspendRequest& request) {
  return IdsAndArraysInPieces(request, [this](const SuspendRequest& piece) { return Send(piece); });
}
Result<ResumeReply> Client::Resume(const ResumeRequest& request) {
  return IdsAndArraysInPieces(request, [this](const ResumeRequest& piece) { return Send(piece); });
}
Result<UpdateArrayReply> Client::UpdateArray(const UpdateArrayRequest& request) {
  return InPieces<UpdateArrayReply>(
      request.arrays.size(),
      [&](size_t from, size_t to) {
        return UpdateArrayRequest{Slice(request.arrays, from, to), request.limit};
      },
      [this](const UpdateArrayRequest& piece) { return Send(piece); });
}
Result<UpdateReply> Client::Update(const UpdateRequest& request) {
  return IdsAndArraysInPieces(request, [this, &request](UpdateRequest piece) {
    piece.edit = request.edit;  // every piece changes the same fields
    return Send(piece);
  });
}
Result<GpusReply> Client::Gpus() { return Send(GpusRequest{}); }
Result<QosReply> Client::Qos() { return Send(QosRequest{}); }
Result<LogsReply> Client::Logs(const LogsRequest& request) { return Send(request); }
Result<OpenLeaseReply> Client::OpenLease(const OpenLeaseRequest& request) { return Send(request); }
Result<AttachLeaseReply> Client::AttachLease(const AttachLeaseRequest& request) {
  return Send(request);
}
Result<CloseLeaseReply> Client::CloseLease(const CloseLeaseRequest& request) {
  return Send(request);
}

std::vector<Result<SubmitReply>> Client::SubmitEach(const std::vector<SubmitRequest>& requests) {
  std::vector<Result<SubmitReply>> results(requests.size(),
                                           Result<SubmitReply>(Internal("not sent")));
  std::string out;
  std::vector<size_t> on_wire;  // the request each line sent is, in order
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].wait) {
      results[i] = InvalidArgument("a submit with wait cannot be sent with others");
      continue;
    }
    std::string line = ToJson(requests[i]).dump() + "\n";
    if (line.size() > kMaxMessageBytes + 1) {
      results[i] = InvalidArgument("request is larger than 1 MiB");
      continue;
    }
    out += line;
    on_wire.push_back(i);
  }
  // Sending and reading interleave: pinpointd stops reading a connection whose replies pile up
  // unread, so sending everything first could leave both sides waiting for good.
  size_t sent = 0, answered = 0;
  Status broken;
  while (answered < on_wire.size()) {
    pollfd p{fd_, static_cast<short>(POLLIN | (sent < out.size() ? POLLOUT : 0)), 0};
    if (::poll(&p, 1, -1) < 0) {
      if (errno == EINTR) continue;
      broken = Unavailable(std::string("poll: ") + std::strerror(errno));
      break;
    }
    if (sent < out.size() && (p.revents & POLLOUT)) {
      ssize_t n = ::send(fd_, out.data() + sent, out.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        sent += static_cast<size_t>(n);
      } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        std::string why = std::strerror(errno);
        auto refusal = ReadRefusal();
        broken = refusal ? *refusal : Unavailable("lost connection to pinpointd: " + why);
        break;
      }
    }
    if ((p.revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    char buf[65536];
    ssize_t n = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    if (n <= 0) {
      broken = Unavailable("pinpointd closed the connection before replying");
      break;
    }
    buffer_.append(buf, static_cast<size_t>(n));
    size_t newline;
    while (answered < on_wire.size() && (newline = buffer_.find('\n')) != std::string::npos) {
      auto reply = ParseReplyLine(std::string_view(buffer_).substr(0, newline));
      buffer_.erase(0, newline + 1);
      size_t i = on_wire[answered++];
      results[i] =
          reply.ok() ? DecodeReply<SubmitRequest>(*reply) : Result<SubmitReply>(reply.status());
    }
    if (buffer_.size() > kMaxMessageBytes * 64) {
      broken = Unavailable("reply from pinpointd is too large");
      break;
    }
  }
  for (; answered < on_wire.size(); ++answered) results[on_wire[answered]] = broken;
  return results;
}

std::optional<Status> Client::ReadRefusal() {
  char buf[4096];
  ssize_t n;
  while ((n = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT)) > 0 && buffer_.size() < kMaxMessageBytes)
    buffer_.append(buf, static_cast<size_t>(n));
  size_t newline = buffer_.find('\n');
  if (newline == std::string::npos) return std::nullopt;
  auto reply = ParseReplyLine(std::string_view(buffer_).substr(0, newline));
  if (reply.ok()) return std::nullopt;  // not a refusal
  return reply.status();
}

}  // namespace pinpoint
