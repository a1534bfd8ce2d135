// pinpoint-cdi-hook (hook.h): the OCI state it reads and what it refuses.
#include "cdi_hook/hook.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/raw_control.h"
#include "common/test_dir.h"

namespace pinpoint::cdi {
namespace {

namespace fs = std::filesystem;

TEST(OciTest, StateNeedsAPositivePid) {
  auto s = ParseOciState(R"({"ociVersion": "1.0.2", "id": "c1", "pid": 4242, "bundle": "/run/b"})");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->pid, 4242);
  EXPECT_EQ(s->bundle, "/run/b");
  EXPECT_FALSE(ParseOciState(R"({"pid": 0})").ok());
  EXPECT_FALSE(ParseOciState(R"({"pid": "1"})").ok());
  EXPECT_FALSE(ParseOciState("not json").ok());
  EXPECT_FALSE(ParseOciState("[1]").ok());
}

TEST(OciTest, TheContainersUidIsZeroWhenItNamesNone) {
  EXPECT_EQ(ParseOciUid(R"({"process": {"user": {"uid": 1000, "gid": 1000}}})").value(), 1000u);
  EXPECT_EQ(ParseOciUid(R"({"process": {"args": ["sh"]}})").value(), 0u);
  EXPECT_EQ(ParseOciUid(R"({})").value(), 0u);
  EXPECT_FALSE(ParseOciUid(R"({"process": {"user": {"uid": -1}}})").ok());
  EXPECT_FALSE(ParseOciUid(R"({"process": {"user": {"uid": 4294967295}}})").ok());
  EXPECT_FALSE(ParseOciUid("{").ok());
}

int Hook(std::vector<std::string> args, const std::string& stdin_text, std::string* err) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::istringstream in(stdin_text);
  std::ostringstream e;
  int rc = RunHook(static_cast<int>(argv.size()), argv.data(), in, e);
  *err = e.str();
  return rc;
}

TEST(CdiHookTest, ABadLeaseIdOrVerbIsAUsageErrorOnOneEscapedLine) {
  std::string err;
  EXPECT_EQ(Hook({"pinpoint-cdi-hook", "attach", "1;\x1b[2Jrm"}, "", &err), 2);
  EXPECT_FALSE(HasRawControl(err, /*newline_ok=*/true)) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_EQ(Hook({"pinpoint-cdi-hook", "detach", "4"}, "", &err), 2);
  EXPECT_EQ(Hook({"pinpoint-cdi-hook", "attach", "-4"}, "", &err), 2);
}

// Attack: state larger than 64 KiB is refused, not read on; no daemon is reached.
TEST(CdiHookTest, OversizedStateIsRefused) {
  TestDir dir;
  std::string err;
  std::string big = R"({"pid": 1, "pad": ")" + std::string(70 * 1024, 'x') + "\"}";
  EXPECT_EQ(Hook({"pinpoint-cdi-hook", "attach", "4", "--socket", dir.path() + "/none"}, big, &err),
            1);
  EXPECT_NE(err.find("larger than 65536 bytes"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  // A bundle that is a link is not read through (config.json would be another directory's).
  fs::create_directory(dir.path() + "/real");
  std::ofstream(dir.path() + "/real/config.json") << R"({"process": {"user": {"uid": 0}}})";
  fs::create_directory_symlink(dir.path() + "/real", dir.path() + "/bundle");
  std::string state = R"({"pid": 1, "bundle": ")" + dir.path() + "/bundle\"}";
  EXPECT_EQ(
      Hook({"pinpoint-cdi-hook", "attach", "4", "--socket", dir.path() + "/none"}, state, &err), 1);
  EXPECT_EQ(err.find("not running"), std::string::npos) << "it went on to pinpointd: " << err;
}

}  // namespace
}  // namespace pinpoint::cdi
