// ServerLogScanner: reads the new lines of an MPS server log as root, although the log's user can
// write it (the server runs as that user and the log directory is theirs). What the user writes
// there is a claim, never a fact (docs/security.md): the scanner only keeps pinpointd safe while
// reading it.
//
// Promises: opens the log as common/file_util's *At helpers open what a user can write (the
// directory pinned, no link followed, never blocking: a FIFO or device there is refused), reads at
// most max_read_bytes per Scan and holds at most max_line_bytes of a partial line, skips lines
// longer than that, and when it has fallen more than max_backlog_bytes behind it jumps ahead
// instead of reading the backlog. A replaced or truncated file is read from its start.
//
// Not thread-safe: one owner.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pinpoint::mps {

struct LogScanOptions {
  uint64_t max_read_bytes = 64 * 1024;
  size_t max_line_bytes = 4096;
  uint64_t max_backlog_bytes = 4 * 1024 * 1024;
};

struct LogScan {
  std::vector<std::string> lines;  // complete new lines that hold the marker, without '\n'
  uint64_t skipped_bytes = 0;      // jumped over (backlog) or dropped (over-long lines)
  std::string problem;             // why the file could not be read ("" when fine or missing)
};

class ServerLogScanner {
 public:
  explicit ServerLogScanner(std::string path, LogScanOptions options = {});

  // Starts after what the file holds now: older lines are never reported.
  void SkipToEnd();
  // New complete lines since the last call that contain `marker`.
  LogScan Scan(std::string_view marker);

  uint64_t offset() const { return offset_; }

 private:
  std::string path_;
  LogScanOptions options_;
  uint64_t offset_ = 0;
  uint64_t dev_ = 0, ino_ = 0;  // the file read so far; another one is read from its start
  std::string partial_;         // the start of a line whose end has not been written yet
  bool dropping_ = false;       // inside an over-long line: drop bytes up to its newline
};

}  // namespace pinpoint::mps
