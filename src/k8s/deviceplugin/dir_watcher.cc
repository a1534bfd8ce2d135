#include "k8s/deviceplugin/dir_watcher.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pinpoint::k8s {

Result<DirWatcher> DirWatcher::Open(const std::string& dir) {
  int fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (fd < 0) return IoError("inotify: " + std::string(std::strerror(errno)));
  uint32_t mask = IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_ONLYDIR;
  if (::inotify_add_watch(fd, dir.c_str(), mask) < 0) {
    int err = errno;
    ::close(fd);
    return IoError("cannot watch " + dir + ": " + std::strerror(err));
  }
  int wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) {
    int err = errno;
    ::close(fd);
    return IoError("eventfd: " + std::string(std::strerror(err)));
  }
  return DirWatcher(fd, wake);
}

DirWatcher::DirWatcher(DirWatcher&& other) noexcept
    : inotify_fd_(other.inotify_fd_), wake_fd_(other.wake_fd_) {
  other.inotify_fd_ = other.wake_fd_ = -1;
}

DirWatcher::~DirWatcher() {
  if (inotify_fd_ >= 0) ::close(inotify_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void DirWatcher::Wake() {
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
}

Result<std::vector<DirEvent>> DirWatcher::Next() {
  pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  while (::poll(fds, 2, -1) < 0) {
    if (errno != EINTR) return IoError("poll: " + std::string(std::strerror(errno)));
  }
  std::vector<DirEvent> events;
  if (fds[1].revents & POLLIN) {
    uint64_t count;
    [[maybe_unused]] ssize_t n = ::read(wake_fd_, &count, sizeof count);
    return events;
  }
  alignas(inotify_event) char buffer[16 * 1024];
  ssize_t n = ::read(inotify_fd_, buffer, sizeof buffer);
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR) return events;
    return IoError("inotify: " + std::string(std::strerror(errno)));
  }
  for (ssize_t at = 0; at + static_cast<ssize_t>(sizeof(inotify_event)) <= n;) {
    const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
    if (event->len > 0) {
      events.push_back({std::string(event->name, ::strnlen(event->name, event->len)),
                        (event->mask & (IN_CREATE | IN_MOVED_TO)) != 0});
    }
    at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
  }
  return events;
}

}  // namespace pinpoint::k8s
