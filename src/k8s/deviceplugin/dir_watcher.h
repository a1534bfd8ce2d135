// Watches one directory (inotify) for names created or removed in it. Linux only.
#pragma once

#include <string>
#include <vector>

#include "pinpoint/status.h"

namespace pinpoint::k8s {

struct DirEvent {
  std::string name;      // the entry's name in the directory
  bool created = false;  // created or moved in; else deleted or moved out
};

class DirWatcher {
 public:
  // Errors: kIo naming the directory (missing, not a directory, no inotify instances left).
  static Result<DirWatcher> Open(const std::string& dir);
  DirWatcher(DirWatcher&& other) noexcept;
  DirWatcher& operator=(DirWatcher&&) = delete;
  DirWatcher(const DirWatcher&) = delete;
  ~DirWatcher();

  // Blocks until events come or Wake is called from another thread; returns the events (none
  // after a Wake). Errors: kIo when inotify fails.
  Result<std::vector<DirEvent>> Next();
  // Makes a blocked (or the next) Next return. Thread-safe.
  void Wake();

 private:
  DirWatcher(int inotify_fd, int wake_fd) : inotify_fd_(inotify_fd), wake_fd_(wake_fd) {}
  int inotify_fd_ = -1;
  int wake_fd_ = -1;
};

}  // namespace pinpoint::k8s
