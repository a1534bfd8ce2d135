// Small filesystem helpers with Status errors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "pinpoint/status.h"

namespace pinpoint {

// Writes `data` to `path` so that a reader sees the old or the new content, never a mix, and the
// new content survives a crash once this returns: temporary file, fsync, rename, fsync of the
// directory. Errors: kIo naming the path and errno text.
// With durable=false the fsyncs are skipped: atomic for readers and across a crash of this
// process, not across a power loss.
Status WriteFileAtomic(const std::string& path, const std::string& data, int mode = 0644,
                       bool durable = true);

// Reads at most `max_bytes` from the end of the file (the whole file when it is smaller).
// Errors: kNotFound when missing, kIo otherwise.
Result<std::string> ReadFileTail(const std::string& path, uint64_t max_bytes);
Result<std::string> ReadFile(const std::string& path);

// mkdir -p with `mode` for created directories. Errors: kIo.
Status MakeDirs(const std::string& path, int mode = 0755);

// ---- Files inside a directory that only this process's user may change ----
// The *At helpers never follow a symlink in the final component and never block on a FIFO:
// a link or special file planted where a file is expected makes them fail (kIo naming the
// name and errno text, e.g. "Too many levels of symbolic links"), so root never writes or
// reads through a path a user chose. Together with a directory opened by OpenDirNoFollow,
// which pins the directory itself, no component a user could swap is ever resolved again.

// An owned file descriptor, closed on destruction. -1 when empty.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release();

 private:
  int fd_ = -1;
};

// Opens the directory `path` (O_DIRECTORY | O_NOFOLLOW: a symlink in its last component is
// refused). Errors: kNotFound when missing; kUnavailable for a transient error (IsTransientErrno:
// out of descriptors, say); kIo otherwise (a symlink, not a directory, ...).
Result<UniqueFd> OpenDirNoFollow(const std::string& path);

// Opens `name` (one component, no '/') in `dir_fd` with `flags` | O_NOFOLLOW | O_CLOEXEC |
// O_NONBLOCK (O_NONBLOCK is cleared again once opened). Add O_CREAT | O_EXCL where a fresh
// file is expected. Errors: kNotFound when missing (and no O_CREAT); kUnavailable for a transient
// error (IsTransientErrno); kIo otherwise: O_EXCL on an existing name ("File exists"), a symlink,
// or anything that is not a regular file.
Result<UniqueFd> OpenFileAt(int dir_fd, const std::string& name, int flags, int mode = 0600);

// As WriteFileAtomic, inside `dir_fd`: writes <name>.tmp (removing any earlier one first, then
// O_CREAT | O_EXCL | O_NOFOLLOW), fsyncs it, renames it over `name` and fsyncs the directory.
// A failed write removes its partial <name>.tmp. Errors: kIo naming the file and errno text.
Status WriteFileAtomicAt(int dir_fd, const std::string& name, const std::string& data,
                         int mode = 0644, bool durable = true);

// Reads a regular file `name` in `dir_fd` without following a link; at most `max_bytes`:
// ReadFileTailAt keeps the last max_bytes, ReadFileBoundedAt fails (kIo "... larger than N
// bytes") when the file is larger. Errors: kNotFound when missing; kUnavailable for a transient
// open or read error (IsTransientErrno); kIo for a link, a special file or another read error.
Result<std::string> ReadFileTailAt(int dir_fd, const std::string& name, uint64_t max_bytes);
Result<std::string> ReadFileBoundedAt(int dir_fd, const std::string& name, uint64_t max_bytes);

// A piece of a file and where it lies: data is the bytes [begin, begin + data.size()) of a file
// that was `size` bytes long when it was read.
struct FileRange {
  std::string data;
  uint64_t begin = 0;
  uint64_t size = 0;
};
// As ReadFileTailAt, from byte `from` on (nullopt: the last max_bytes): at most max_bytes.
// A file now shorter than `from` (truncated or replaced) is read from its beginning.
// Errors: as ReadFileTailAt.
Result<FileRange> ReadFileRangeAt(int dir_fd, const std::string& name, std::optional<uint64_t> from,
                                  uint64_t max_bytes);

// Removes `name` in `dir_fd` (unlinkat: a symlink is removed, never followed). Ok when missing.
// Errors: kIo.
Status RemoveAt(int dir_fd, const std::string& name);

// Creates the directory `path` (mode `mode`, owned by this process's user) that must not exist
// yet. When something is already there (a directory left from earlier, a link, a file) it is
// renamed, never followed, to <path>.stale-<n> (the first n from 1 that is free) and
// `*moved_to` is set to that path; otherwise `*moved_to` is cleared. The parent directory must
// exist. Errors: kIo (mkdir or rename failed, or 1000 stale names are taken).
Status MakeFreshDir(const std::string& path, int mode, std::string* moved_to);

// "strerror(errno)" as a string.
std::string ErrnoText(int err);

// Whether `err` may go away by itself (EMFILE, ENFILE, ENOMEM, ENOBUFS, EAGAIN, EINTR, EIO): a
// caller retries later and never takes it as a fact about the file (a job's end, say).
bool IsTransientErrno(int err);
// "<what>: strerror(err)" as kUnavailable when IsTransientErrno(err), else kIo.
Status ErrnoStatus(const std::string& what, int err);

}  // namespace pinpoint
