#include "api/server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "api/protocol.h"
#include "pinpoint/client.h"

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

}  // namespace

Result<std::unique_ptr<Server>> Server::Listen(const std::string& socket_path, Handler* handler) {
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
  return std::unique_ptr<Server>(new Server(fd, socket_path, handler));
}

Server::Server(int listen_fd, std::string path, Handler* handler)
    : listen_fd_(listen_fd), path_(std::move(path)), handler_(handler) {}

Server::~Server() {
  for (auto& [id, conn] : conns_) ::close(conn.fd);
  ::close(listen_fd_);
  ::unlink(path_.c_str());
}

std::vector<int> Server::RunOnce(int timeout_ms, const std::vector<int>& extra_fds) {
  std::vector<pollfd> fds;
  fds.push_back({listen_fd_, POLLIN, 0});
  for (int fd : extra_fds) fds.push_back({fd, POLLIN, 0});
  std::vector<ConnId> ids;
  for (auto& [id, conn] : conns_) {
    short events = conn.closing ? 0 : POLLIN;
    if (!conn.out.empty()) events |= POLLOUT;
    fds.push_back({conn.fd, events, 0});
    ids.push_back(id);
  }
  std::vector<int> ready_extra;
  int n = ::poll(fds.data(), fds.size(), timeout_ms);
  if (n <= 0) return ready_extra;
  if (fds[0].revents & POLLIN) Accept();
  for (size_t i = 0; i < extra_fds.size(); ++i) {
    if (fds[1 + i].revents & POLLIN) ready_extra.push_back(extra_fds[i]);
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    const pollfd& p = fds[1 + extra_fds.size() + i];
    auto it = conns_.find(ids[i]);
    if (it == conns_.end()) continue;
    if (p.revents & POLLOUT) WriteTo(it->second);
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) ReadFrom(ids[i], it->second);
  }
  // Close what is done: failed connections and ones whose last reply has gone out.
  for (auto it = conns_.begin(); it != conns_.end();) {
    ConnId id = it->first;
    ++it;
    Conn& c = conns_[id];
    if (c.fd < 0 || (c.closing && c.out.empty())) Close(id);
  }
  return ready_extra;
}

void Server::Accept() {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    if (conns_.size() >= kMaxConnections) {
      ::close(fd);  // shed load rather than run out of descriptors
      continue;
    }
    auto caller = PeerCaller(fd);
    if (!caller.ok()) {
      ::close(fd);
      continue;
    }
    Conn conn;
    conn.fd = fd;
    conn.caller = *caller;
    conns_.emplace(next_id_++, std::move(conn));
  }
}

void Server::ReadFrom(ConnId id, Conn& conn) {
  char buf[65536];
  bool peer_done = false;
  for (;;) {
    ssize_t n = ::recv(conn.fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0) {  // failed: nothing can be answered
      conn.closing = true;
      conn.out.clear();
      return;
    }
    if (n == 0) {  // the peer is done sending; answer what it sent, then close
      peer_done = true;
      break;
    }
    conn.in.append(buf, static_cast<size_t>(n));
    if (conn.in.size() > kMaxMessageBytes + 1 && conn.in.find('\n') == std::string::npos) {
      conn.out += Serialize(ErrorReply(InvalidArgument("message is larger than 1 MiB")));
      conn.in.clear();
      conn.closing = true;
      WriteTo(conn);
      return;
    }
  }
  size_t newline;
  while (!conn.closing && (newline = conn.in.find('\n')) != std::string::npos) {
    std::string line = conn.in.substr(0, newline);
    conn.in.erase(0, newline + 1);
    auto request = ParseRequest(line);
    std::optional<json> reply;
    if (!request.ok()) {
      reply = ErrorReply(request.status());
    } else {
      reply = handler_->Handle(conn.caller, *request, id);
    }
    if (reply) conn.out += Serialize(*reply);
  }
  if (!conn.out.empty()) WriteTo(conn);
  if (peer_done) conn.closing = true;
}

void Server::WriteTo(Conn& conn) {
  while (!conn.out.empty()) {
    ssize_t n = ::send(conn.fd, conn.out.data(), conn.out.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      conn.out.clear();
      conn.closing = true;
      return;
    }
    conn.out.erase(0, static_cast<size_t>(n));
  }
}

void Server::Reply(ConnId id, const json& reply) {
  auto it = conns_.find(id);
  if (it == conns_.end() || it->second.closing) return;
  it->second.out += Serialize(reply);
  WriteTo(it->second);
}

void Server::Close(ConnId id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  ::close(it->second.fd);
  conns_.erase(it);
  handler_->Closed(id);
}

}  // namespace pinpoint::api
