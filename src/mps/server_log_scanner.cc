#include "mps/server_log_scanner.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/file_util.h"

namespace pinpoint::mps {

namespace {

// The log as common/file_util opens what a user can write: the directory pinned, no link
// followed, nothing but a regular file, never a wait on a FIFO. Errors: kNotFound when missing.
Result<UniqueFd> OpenLog(const std::string& path) {
  size_t slash = path.rfind('/');
  auto dir =
      OpenDirNoFollow(slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash));
  if (!dir.ok()) return dir.status();
  return OpenFileAt(dir->get(), path.substr(slash + 1), O_RDONLY | O_NOCTTY);
}

}  // namespace

ServerLogScanner::ServerLogScanner(std::string path, LogScanOptions options)
    : path_(std::move(path)), options_(options) {}

void ServerLogScanner::SkipToEnd() {
  partial_.clear();
  dropping_ = false;
  offset_ = 0;
  dev_ = ino_ = 0;
  auto file = OpenLog(path_);
  struct stat st {};
  if (!file.ok() || ::fstat(file->get(), &st) != 0) return;
  offset_ = static_cast<uint64_t>(st.st_size);
  dev_ = st.st_dev;
  ino_ = st.st_ino;
}

LogScan ServerLogScanner::Scan(std::string_view marker) {
  LogScan out;
  auto file = OpenLog(path_);
  if (!file.ok()) {
    if (file.status().code() != Code::kNotFound)
      out.problem = path_ + ": " + file.status().message();
    return out;
  }
  struct stat st {};
  if (::fstat(file->get(), &st) != 0) {
    out.problem = path_ + ": " + std::strerror(errno);
    return out;
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (st.st_dev != dev_ || st.st_ino != ino_ || size < offset_) {  // replaced or truncated
    dev_ = st.st_dev;
    ino_ = st.st_ino;
    offset_ = 0;
    partial_.clear();
    dropping_ = false;
  }
  if (size - offset_ > options_.max_backlog_bytes) {
    uint64_t resume = size - options_.max_read_bytes;
    out.skipped_bytes += resume - offset_;
    offset_ = resume;
    partial_.clear();
    dropping_ = true;  // the first line there is a fragment
  }
  uint64_t want = std::min<uint64_t>(size - offset_, options_.max_read_bytes);
  std::string buf(want, '\0');
  ssize_t n = want == 0 ? 0 : ::pread(file->get(), buf.data(), want, static_cast<off_t>(offset_));
  if (n < 0) {
    out.problem = path_ + ": " + std::strerror(errno);
    return out;
  }
  buf.resize(static_cast<size_t>(n));
  offset_ += static_cast<uint64_t>(n);
  size_t start = 0;
  for (;;) {
    size_t newline = buf.find('\n', start);
    std::string_view piece(buf.data() + start,
                           (newline == std::string::npos ? buf.size() : newline) - start);
    if (newline == std::string::npos) {
      if (!dropping_ && partial_.size() + piece.size() <= options_.max_line_bytes) {
        partial_.append(piece);
      } else {
        out.skipped_bytes += partial_.size() + piece.size();
        partial_.clear();
        dropping_ = true;
      }
      break;
    }
    if (dropping_ || partial_.size() + piece.size() > options_.max_line_bytes) {
      out.skipped_bytes += partial_.size() + piece.size();
    } else {
      partial_.append(piece);
      if (partial_.find(marker) != std::string::npos) out.lines.push_back(partial_);
    }
    partial_.clear();
    dropping_ = false;
    start = newline + 1;
  }
  return out;
}

}  // namespace pinpoint::mps
