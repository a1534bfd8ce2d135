// ServerLogScanner against files a hostile user could plant in their MPS log directory.
#include "mps/server_log_scanner.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "common/test_dir.h"

namespace pinpoint::mps {
namespace {

constexpr char kMarker[] = "encountered a fatal GPU error";

class ServerLogScannerTest : public ::testing::Test {
 protected:
  void Append(const std::string& text) { std::ofstream(log_, std::ios::app) << text; }
  TestDir tmp_;
  const std::string log_ = tmp_.path() + "/server.log";
};

TEST_F(ServerLogScannerTest, ReportsNewCompleteMarkerLinesOnce) {
  Append("old line encountered a fatal GPU error.\n");
  ServerLogScanner s(log_);
  s.SkipToEnd();
  Append(
      "[Server 1] Client connected\n[Server 1] Client {PID: 5} encountered a fatal GPU "
      "error.\n[Server 1] half");
  auto scan = s.Scan(kMarker);
  ASSERT_EQ(scan.lines.size(), 1u);
  EXPECT_NE(scan.lines[0].find("PID: 5"), std::string::npos);
  Append(" a line encountered a fatal GPU error.\n");
  scan = s.Scan(kMarker);
  ASSERT_EQ(scan.lines.size(), 1u) << "a partial line is reported once it is whole";
  EXPECT_EQ(scan.lines[0], "[Server 1] half a line encountered a fatal GPU error.");
  EXPECT_TRUE(s.Scan(kMarker).lines.empty());
}

TEST_F(ServerLogScannerTest, NeverFollowsALinkToAnotherUsersLog) {
  std::string other = tmp_.path() + "/other.log";
  std::ofstream(other) << "";
  ASSERT_EQ(::symlink(other.c_str(), log_.c_str()), 0);
  ServerLogScanner s(log_);
  s.SkipToEnd();
  std::ofstream(other, std::ios::app) << "Client {PID: 9} encountered a fatal GPU error.\n";
  auto scan = s.Scan(kMarker);
  EXPECT_TRUE(scan.lines.empty());
  EXPECT_FALSE(scan.problem.empty());
}

TEST_F(ServerLogScannerTest, AFifoInItsPlaceNeverBlocks) {
  ASSERT_EQ(::mkfifo(log_.c_str(), 0600), 0);
  ServerLogScanner s(log_);
  s.SkipToEnd();
  auto scan = s.Scan(kMarker);  // would hang forever on a blocking open or read
  EXPECT_TRUE(scan.lines.empty());
  EXPECT_NE(scan.problem.find("not a regular file"), std::string::npos) << scan.problem;
}

TEST_F(ServerLogScannerTest, AHugeFileWithoutNewlinesIsReadInBoundedSteps) {
  ServerLogScanner s(log_,
                     {.max_read_bytes = 1024, .max_line_bytes = 256, .max_backlog_bytes = 8192});
  s.SkipToEnd();
  Append(std::string(4000, 'x'));
  uint64_t before = s.offset();
  auto scan = s.Scan(kMarker);
  EXPECT_LE(s.offset() - before, 1024u) << "one scan reads at most max_read_bytes";
  EXPECT_TRUE(scan.lines.empty());
  for (int i = 0; i < 4; ++i) s.Scan(kMarker);
  // The over-long line is dropped whole, and the scanner resumes at the next line.
  Append("tail\nClient {PID: 7} encountered a fatal GPU error.\n");
  std::vector<std::string> found;
  for (int i = 0; i < 4; ++i) {
    auto more = s.Scan(kMarker).lines;
    found.insert(found.end(), more.begin(), more.end());
  }
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0], "Client {PID: 7} encountered a fatal GPU error.");
}

TEST_F(ServerLogScannerTest, FarBehindItSkipsTheBacklogInsteadOfReadingIt) {
  ServerLogScanner s(log_,
                     {.max_read_bytes = 1024, .max_line_bytes = 256, .max_backlog_bytes = 8192});
  s.SkipToEnd();
  std::string lines;
  for (int i = 0; i < 2000; ++i) lines += "Client {PID: 1} encountered a fatal GPU error.\n";
  Append(lines);
  auto scan = s.Scan(kMarker);
  EXPECT_GT(scan.skipped_bytes, lines.size() - 2048);
  EXPECT_LE(scan.lines.size(), 1024u / 40);
  EXPECT_EQ(s.offset(), lines.size());
}

TEST_F(ServerLogScannerTest, AReplacedOrTruncatedFileIsReadFromItsStart) {
  Append(std::string(1000, 'a') + "\n");  // longer than what replaces it: reset by size or inode
  ServerLogScanner s(log_);
  s.SkipToEnd();
  ASSERT_EQ(::unlink(log_.c_str()), 0);
  Append("Client {PID: 3} encountered a fatal GPU error.\n");
  EXPECT_EQ(s.Scan(kMarker).lines.size(), 1u);
  std::ofstream(log_, std::ios::trunc) << "x encountered a fatal GPU error.\n";
  EXPECT_EQ(s.Scan(kMarker).lines.size(), 1u);
}

}  // namespace
}  // namespace pinpoint::mps
