#include "api/server.h"

#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "api/protocol.h"
#include "pinpoint/api.h"

namespace pinpoint::api {

using nlohmann::json;

namespace {

std::string Errno() { return std::strerror(errno); }

// True when something accepts connections at `path`.
bool SomeoneListens(const sockaddr_un& addr) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

// Replies may carry arbitrary bytes (job logs): invalid UTF-8 is replaced, never thrown on.
std::string Serialize(const json& reply) {
  return reply.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

// Per connection and RunOnce call, so one busy client cannot starve the others: reads of
// kReadChunkBytes, requests handled, connections accepted.
constexpr size_t kReadChunkBytes = 65536;
constexpr int kReadChunksPerRun = 4;
constexpr size_t kRequestsPerRun = 256;
// And per user and RunOnce call, the time spent handling their requests: once a user has had this
// much, their other requests wait for the next call, so a user who pipelines costly requests (or
// opens many connections to send them) delays another user by about one request, never by all
// of theirs. A request is never cut short: each is bounded by the API (ids per request, page size).
constexpr int64_t kHandleMsPerUserPerRun = 10;
constexpr int kAcceptsPerRun = 256;
// A buffer emptied with more capacity than this gives it back: idle connections stay cheap.
constexpr size_t kKeptCapacityBytes = 65536;

// A reply this large, and the JSON built for it, leave freed pages in the heap.
constexpr size_t kTrimAfterBytes = size_t{1} << 20;

void Release(std::string& buffer) {
  size_t capacity = buffer.capacity();
  if (capacity > kKeptCapacityBytes)
    std::string().swap(buffer);
  else
    buffer.clear();
  // Hand them back, so one large listing does not keep the daemon's memory up for good.
  if (capacity > kTrimAfterBytes) ::malloc_trim(0);
}

// Drops buffer[0, *pos) once it is at least half the buffer, so every byte is moved at most once
// more than it is appended: linear time however many small pieces come and go.
void Compact(std::string& buffer, size_t* pos, size_t* scan = nullptr) {
  if (*pos == buffer.size()) {
    Release(buffer);
    if (scan != nullptr) *scan = 0;
    *pos = 0;
  } else if (*pos > 0 && *pos * 2 >= buffer.size()) {
    buffer.erase(0, *pos);
    if (scan != nullptr) *scan -= *pos;
    *pos = 0;
  }
}

// One error line to a connection that is refused, then close. The socket is new and its buffer
// empty, so the short line goes out whole or not at all; nothing waits for the client.
void Refuse(int fd, const Status& why) {
  std::string line = Serialize(ErrorReply(why));
  ssize_t ignored = ::send(fd, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  (void)ignored;
  ::close(fd);
}

}  // namespace

Result<std::unique_ptr<Server>> Server::Listen(const std::string& socket_path, Handler* handler,
                                               ServerOptions options) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(addr.sun_path))
    return InvalidArgument("socket path is too long: " + socket_path);
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  if (SomeoneListens(addr))
    return Unavailable("another pinpointd is already listening on " + socket_path);
  ::unlink(socket_path.c_str());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return IoError("socket: " + Errno());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::chmod(socket_path.c_str(), 0666) != 0 || ::listen(fd, 256) != 0) {
    std::string err = Errno();
    ::close(fd);
    return IoError("cannot listen on " + socket_path + ": " + err);
  }
  return std::unique_ptr<Server>(new Server(fd, socket_path, handler, std::move(options)));
}

Server::Server(int listen_fd, std::string path, Handler* handler, ServerOptions options)
    : listen_fd_(listen_fd),
      path_(std::move(path)),
      handler_(handler),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : &real_clock_),
      limits_(options_.limits) {
  if (!options_.identify) options_.identify = PeerCaller;
  spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
}

Server::~Server() {
  for (auto& [id, conn] : conns_) ::close(conn.fd);
  if (spare_fd_ >= 0) ::close(spare_fd_);
  ::close(listen_fd_);
  ::unlink(path_.c_str());
}

size_t Server::Conn::FindLine() {
  if (scan_pos < in.size()) {
    size_t newline = in.find('\n', scan_pos);
    scan_pos = newline == std::string::npos ? in.size() : newline;
    return newline;
  }
  return std::string::npos;
}

bool Server::WantsInput(Conn& conn) const {
  return !conn.dead && !conn.input_done && conn.FindLine() == std::string::npos;
}

bool Server::MayHandle(const Conn& conn) const {
  return !conn.dead && conn.unsent() < options_.limits.max_reply_backlog_bytes &&
         conn.deferred < options_.limits.max_deferred_per_connection;
}

std::vector<int> Server::RunOnce(int timeout_ms, const std::vector<int>& extra_fds) {
  std::vector<pollfd> fds;
  fds.push_back({listen_fd_, POLLIN, 0});
  for (int fd : extra_fds) fds.push_back({fd, POLLIN, 0});
  std::vector<ConnId> ids;
  handled_ms_.clear();
  bool work_left = false;  // requests read last time and not handled for want of budget
  for (auto& [id, conn] : conns_) {
    // A connection that may not be read from polls for no event: poll still reports its hang-up.
    short events = WantsInput(conn) ? POLLIN : 0;
    if (conn.unsent() > 0) events |= POLLOUT;
    if (conn.FindLine() != std::string::npos && MayHandle(conn)) work_left = true;
    fds.push_back({conn.fd, events, 0});
    ids.push_back(id);
  }
  std::vector<int> ready_extra;
  int n = ::poll(fds.data(), fds.size(), work_left ? 0 : timeout_ms);
  if (n < 0) n = 0;
  std::vector<ConnId> accepted;
  if (n > 0 && (fds[0].revents & POLLIN)) accepted = Accept();
  for (size_t i = 0; n > 0 && i < extra_fds.size(); ++i) {
    if (fds[1 + i].revents & POLLIN) ready_extra.push_back(extra_fds[i]);
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    auto it = conns_.find(ids[i]);
    if (it == conns_.end()) continue;
    Conn& conn = it->second;
    short revents = n > 0 ? fds[1 + extra_fds.size() + i].revents : 0;
    if (revents & POLLOUT) WriteTo(conn);
    bool readable = false;
    if (revents & (POLLIN | POLLHUP | POLLERR)) {
      // A hang-up on a connection that is not being read: the client is gone.
      if (WantsInput(conn))
        readable = true;
      else if (revents & (POLLHUP | POLLERR))
        conn.dead = true;
    }
    Serve(ids[i], conn, readable);
  }
  // A client sends its request as it connects: the new connections are read now, not after the
  // next pass of the daemon's loop (one pass less for every request, however long passes are).
  for (ConnId id : accepted) {
    auto it = conns_.find(id);
    if (it != conns_.end()) Serve(id, it->second, /*readable=*/true);
  }
  // Close what is done: failed connections, finished ones, and those past the idle rule.
  int64_t now_ms = NowMs();
  for (auto it = conns_.begin(); it != conns_.end();) {
    ConnId id = it->first;
    Conn& c = it->second;
    ++it;
    bool finished =
        c.input_done && c.unsent() == 0 && !(c.FindLine() != std::string::npos && MayHandle(c));
    bool idle = IdleExpired({c.last_progress_ms, c.unsent(), c.deferred}, now_ms,
                            options_.limits.idle_timeout_ms);
    if (c.dead || finished || idle) Close(id);
  }
  return ready_extra;
}

std::vector<ConnId> Server::Accept() {
  std::vector<ConnId> accepted;
  for (int i = 0; i < kAcceptsPerRun; ++i) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE) && spare_fd_ >= 0) {
      ::close(spare_fd_);
      fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd >= 0) Refuse(fd, Unavailable("pinpointd is out of file descriptors; try again later"));
      spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      return accepted;
    }
    if (spare_fd_ < 0) spare_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return accepted;
    auto caller = options_.identify(fd);
    if (!caller.ok()) {
      ::close(fd);
      continue;
    }
    Status admitted = limits_.Admit(caller->uid);
    if (!admitted.ok()) {
      Refuse(fd, admitted);
      continue;
    }
    limits_.Opened(caller->uid);
    Conn conn;
    conn.fd = fd;
    conn.caller = *caller;
    conn.last_progress_ms = NowMs();
    accepted.push_back(next_id_);
    conns_.emplace(next_id_++, std::move(conn));
  }
  return accepted;
}

// Handles what has been read, writes, and reads more while allowed: never more than one message
// plus one chunk is held unhandled, since a chunk is read only when no complete request waits.
void Server::Serve(ConnId id, Conn& conn, bool readable) {
  size_t budget = kRequestsPerRun;
  for (int chunks = 0; !conn.dead;) {
    HandleLines(id, conn, &budget);
    if (conn.unsent() > 0) WriteTo(conn);
    if (conn.FindLine() != std::string::npos) {
      // Stopped with a request waiting: for budget (served next call), backlog or deferred replies.
      if (budget > 0 && MayHandle(conn) && HasTime(conn)) continue;  // the write made room
      return;
    }
    if (!readable || conn.input_done || chunks++ == kReadChunksPerRun) return;
    readable = ReadChunk(conn);
  }
}

bool Server::ReadChunk(Conn& conn) {
  char buf[kReadChunkBytes];
  ssize_t n;
  do {
    n = ::recv(conn.fd, buf, sizeof(buf), 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
  if (n < 0) {  // failed: nothing can be answered
    conn.dead = true;
    return false;
  }
  if (n == 0) {  // the peer is done sending; answer what it sent, then close
    conn.input_done = true;
    return false;
  }
  conn.in.append(buf, static_cast<size_t>(n));
  if (conn.FindLine() == std::string::npos && conn.in.size() - conn.in_pos > kMaxMessageBytes) {
    Queue(conn, ErrorReply(InvalidArgument("message is larger than 1 MiB")));
    Release(conn.in);
    conn.in_pos = conn.scan_pos = 0;
    conn.input_done = true;
    WriteTo(conn);
    return false;
  }
  return true;
}

bool Server::HasTime(const Conn& conn) const {
  auto it = handled_ms_.find(conn.caller.uid);
  return it == handled_ms_.end() || it->second < kHandleMsPerUserPerRun;
}

void Server::HandleLines(ConnId id, Conn& conn, size_t* budget) {
  size_t newline;
  int64_t& spent_ms = handled_ms_[conn.caller.uid];
  while (*budget > 0 && HasTime(conn) && MayHandle(conn) &&
         (newline = conn.FindLine()) != std::string::npos) {
    --*budget;
    int64_t started_ms = NowMs();
    auto request =
        ParseRequest(std::string_view(conn.in).substr(conn.in_pos, newline - conn.in_pos));
    conn.in_pos = conn.scan_pos = newline + 1;
    conn.last_progress_ms = NowMs();
    std::optional<json> reply;
    if (!request.ok()) {
      reply = ErrorReply(request.status());
    } else {
      reply = handler_->Handle(conn.caller, *request, id);
      if (!reply) ++conn.deferred;
    }
    if (reply) Queue(conn, *reply);
    spent_ms += std::max<int64_t>(0, NowMs() - started_ms);  // the clock may be set back
  }
  Compact(conn.in, &conn.in_pos, &conn.scan_pos);
}

void Server::Queue(Conn& conn, const json& reply) {
  Compact(conn.out, &conn.out_pos);
  conn.out += Serialize(reply);
}

void Server::WriteTo(Conn& conn) {
  while (conn.unsent() > 0) {
    ssize_t n = ::send(conn.fd, conn.out.data() + conn.out_pos, conn.unsent(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {
      Release(conn.out);
      conn.out_pos = 0;
      conn.dead = true;
      return;
    }
    conn.out_pos += static_cast<size_t>(n);
    conn.last_progress_ms = NowMs();
  }
  Compact(conn.out, &conn.out_pos);
}

void Server::Reply(ConnId id, const json& reply) {
  auto it = conns_.find(id);
  if (it == conns_.end() || it->second.dead) return;
  Conn& conn = it->second;
  if (conn.deferred > 0) --conn.deferred;
  // The slow-reader clock starts now, not when the client asked.
  conn.last_progress_ms = NowMs();
  Queue(conn, reply);
  WriteTo(conn);
}

size_t Server::unsent_bytes(ConnId id) const {
  auto it = conns_.find(id);
  return it == conns_.end() ? 0 : it->second.unsent();
}

size_t Server::buffered_request_bytes(ConnId id) const {
  auto it = conns_.find(id);
  return it == conns_.end() ? 0 : it->second.in.size() - it->second.in_pos;
}

void Server::Close(ConnId id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  ::close(it->second.fd);
  limits_.Closed(it->second.caller.uid);
  conns_.erase(it);
  handler_->Closed(id);
}

}  // namespace pinpoint::api
