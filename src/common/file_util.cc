#include "common/file_util.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace pinpoint {

std::string ErrnoText(int err) { return std::strerror(err); }

bool IsTransientErrno(int err) {
  switch (err) {
    case EMFILE:
    case ENFILE:
    case ENOMEM:
    case ENOBUFS:
    case EAGAIN:
    case EINTR:
    case EIO:
      return true;
    default:
      return false;
  }
}

Status ErrnoStatus(const std::string& what, int err) {
  std::string message = what + ": " + ErrnoText(err);
  return IsTransientErrno(err) ? Unavailable(std::move(message)) : IoError(std::move(message));
}

namespace {

Status WriteAll(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("write " + path + ": " + ErrnoText(errno));
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

std::string DirName(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

Status WriteFileAtomic(const std::string& path, const std::string& data, int mode, bool durable) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return IoError("open " + tmp + ": " + ErrnoText(errno));
  Status s = WriteAll(fd, data, tmp);
  if (s.ok() && durable && ::fsync(fd) != 0) s = IoError("fsync " + tmp + ": " + ErrnoText(errno));
  ::close(fd);
  if (!s.ok()) return s;
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return IoError("rename " + tmp + ": " + ErrnoText(errno));
  int dir = durable ? ::open(DirName(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return Status::Ok();
}

Result<std::string> ReadFileTail(const std::string& path, uint64_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return NotFound(path + " does not exist");
    return IoError("open " + path + ": " + ErrnoText(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::lseek(fd, st.st_size - static_cast<off_t>(max_bytes), SEEK_SET);
  }
  std::string out;
  char buf[65536];
  while (out.size() < max_bytes) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (out.size() > max_bytes) out.resize(max_bytes);
  return out;
}

Result<std::string> ReadFile(const std::string& path) {
  return ReadFileTail(path, uint64_t{1} << 40);
}

Status MakeDirs(const std::string& path, int mode) {
  if (path.empty()) return InvalidArgument("empty directory path");
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), mode) != 0 && errno != EEXIST)
      return IoError("mkdir " + partial + ": " + ErrnoText(errno));
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return IoError(path + " is not a directory");
  return Status::Ok();
}

}  // namespace pinpoint

namespace pinpoint {

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.Release();
  }
  return *this;
}

int UniqueFd::Release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

Result<UniqueFd> OpenDirNoFollow(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return NotFound(path + " does not exist");
    return ErrnoStatus("open directory " + path, errno);
  }
  return UniqueFd(fd);
}

Result<UniqueFd> OpenFileAt(int dir_fd, const std::string& name, int flags, int mode) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
    return InvalidArgument("not a file name: '" + name + "'");
  // O_NONBLOCK: opening a FIFO planted in place of the file must not hang the caller.
  int fd = ::openat(dir_fd, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode);
  if (fd < 0) {
    if (errno == ENOENT) return NotFound(name + " does not exist");
    return ErrnoStatus("open " + name, errno);
  }
  UniqueFd file(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return IoError("stat " + name + ": " + ErrnoText(errno));
  if (!S_ISREG(st.st_mode)) return IoError(name + " is not a regular file");
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return file;
}

Status RemoveAt(int dir_fd, const std::string& name) {
  if (::unlinkat(dir_fd, name.c_str(), 0) != 0 && errno != ENOENT)
    return IoError("remove " + name + ": " + ErrnoText(errno));
  return Status::Ok();
}

Status WriteFileAtomicAt(int dir_fd, const std::string& name, const std::string& data, int mode,
                         bool durable) {
  std::string tmp = name + ".tmp";
  PP_RETURN_IF_ERROR(RemoveAt(dir_fd, tmp));  // a leftover of a failed write, or a planted link
  auto file = OpenFileAt(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL, mode);
  if (!file.ok()) return file.status();
  Status s = WriteAll(file->get(), data, tmp);
  if (s.ok() && durable && ::fsync(file->get()) != 0)
    s = IoError("fsync " + tmp + ": " + ErrnoText(errno));
  if (s.ok() && ::close(file->Release()) != 0)
    s = IoError("close " + tmp + ": " + ErrnoText(errno));
  if (s.ok() && ::renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0)
    s = IoError("rename " + tmp + ": " + ErrnoText(errno));
  if (!s.ok()) {
    (void)RemoveAt(dir_fd, tmp);  // never leave a partial file for a reader to trip on
    return s;
  }
  if (durable) ::fsync(dir_fd);
  return Status::Ok();
}

namespace {

// Reads from `fd` (at its current offset) until EOF or `max_bytes`.
Result<std::string> ReadUpTo(int fd, uint64_t max_bytes, const std::string& name) {
  std::string out;
  char buf[65536];
  while (out.size() < max_bytes) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(sizeof(buf), max_bytes - out.size()));
    ssize_t n = ::read(fd, buf, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("read " + name, errno);
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace

Result<std::string> ReadFileTailAt(int dir_fd, const std::string& name, uint64_t max_bytes) {
  auto file = OpenFileAt(dir_fd, name, O_RDONLY);
  if (!file.ok()) return file.status();
  struct stat st {};
  if (::fstat(file->get(), &st) == 0 && static_cast<uint64_t>(st.st_size) > max_bytes)
    ::lseek(file->get(), st.st_size - static_cast<off_t>(max_bytes), SEEK_SET);
  return ReadUpTo(file->get(), max_bytes, name);
}

Result<FileRange> ReadFileRangeAt(int dir_fd, const std::string& name, std::optional<uint64_t> from,
                                  uint64_t max_bytes) {
  auto file = OpenFileAt(dir_fd, name, O_RDONLY);
  if (!file.ok()) return file.status();
  struct stat st {};
  if (::fstat(file->get(), &st) != 0) return IoError("stat " + name + ": " + ErrnoText(errno));
  FileRange range;
  range.size = static_cast<uint64_t>(st.st_size);
  if (!from)
    range.begin = range.size > max_bytes ? range.size - max_bytes : 0;
  else
    range.begin = *from > range.size ? 0 : *from;
  if (::lseek(file->get(), static_cast<off_t>(range.begin), SEEK_SET) < 0)
    return IoError("seek " + name + ": " + ErrnoText(errno));
  // Bytes written after the fstat are left for the next read: `size` stays what was measured.
  auto data = ReadUpTo(file->get(), std::min(max_bytes, range.size - range.begin), name);
  if (!data.ok()) return data.status();
  range.data = std::move(data).value();
  return range;
}

Result<std::string> ReadFileBoundedAt(int dir_fd, const std::string& name, uint64_t max_bytes) {
  auto file = OpenFileAt(dir_fd, name, O_RDONLY);
  if (!file.ok()) return file.status();
  // One byte past the bound tells a file that is too large from one that fits exactly.
  auto text = ReadUpTo(file->get(), max_bytes + 1, name);
  if (text.ok() && text->size() > max_bytes)
    return IoError(name + " is larger than " + std::to_string(max_bytes) + " bytes");
  return text;
}

Status MakeFreshDir(const std::string& path, int mode, std::string* moved_to) {
  moved_to->clear();
  if (::mkdir(path.c_str(), static_cast<mode_t>(mode)) == 0) return Status::Ok();
  if (errno != EEXIST) return IoError("mkdir " + path + ": " + ErrnoText(errno));
  for (int n = 1; n <= 1000; ++n) {
    std::string aside = path + ".stale-" + std::to_string(n);
    // NOREPLACE: a plain rename would silently replace an empty directory of that name.
    int r = ::renameat2(AT_FDCWD, path.c_str(), AT_FDCWD, aside.c_str(), RENAME_NOREPLACE);
    if (r != 0 && errno == EINVAL) {  // a filesystem without NOREPLACE
      struct stat st {};
      if (::lstat(aside.c_str(), &st) == 0) continue;
      r = ::rename(path.c_str(), aside.c_str());
    }
    if (r != 0 && errno == EEXIST) continue;
    if (r != 0) return IoError("rename " + path + " to " + aside + ": " + ErrnoText(errno));
    *moved_to = aside;
    if (::mkdir(path.c_str(), static_cast<mode_t>(mode)) != 0)
      return IoError("mkdir " + path + ": " + ErrnoText(errno));
    return Status::Ok();
  }
  return IoError("cannot move " + path + " aside: " + path + ".stale-1..1000 all exist");
}

}  // namespace pinpoint
