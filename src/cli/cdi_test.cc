// `pinpoint cdi` and `pinpoint-cdi-hook` (cdi.h): the spec they write and what they refuse.
#include "cli/cdi.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "common/raw_control.h"
#include "common/test_dir.h"

namespace pinpoint::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

LeaseEdits MpsEdits() {
  LeaseEdits e;
  e.env = {{"CUDA_VISIBLE_DEVICES", "GPU-1"}, {"CUDA_MPS_PIPE_DIRECTORY", "/run/pinpoint/mps/0-1000"}};
  e.device_nodes = {"/dev/nvidia0", "/var/lib/pinpoint/simdev/nvidiactl"};
  e.mounts = {{"/run/pinpoint/mps/0-1000", "/run/pinpoint/mps/0-1000", false}};
  return e;
}

TEST(CdiSpecTest, OneDeviceWithTheLeasesEditsAndItsHooks) {
  json spec = CdiSpec(42, MpsEdits(), "/usr/libexec/pinpoint/pinpoint-cdi-hook", "/run/pinpoint.sock", "/var/run/cdi");
  EXPECT_EQ(spec["cdiVersion"], "0.5.0");
  EXPECT_EQ(spec["kind"], "pinpoint.io/slice");
  ASSERT_EQ(spec["devices"].size(), 1u);
  const json& d = spec["devices"][0];
  EXPECT_EQ(d["name"], "L42");
  const json& edits = d["containerEdits"];
  EXPECT_EQ(edits["env"], json({"CUDA_MPS_PIPE_DIRECTORY=/run/pinpoint/mps/0-1000", "CUDA_VISIBLE_DEVICES=GPU-1"}));
  EXPECT_EQ(edits["deviceNodes"][1], json({{"path", "/dev/nvidiactl"}, {"hostPath", "/var/lib/pinpoint/simdev/nvidiactl"}}));
  EXPECT_EQ(edits["mounts"][0]["options"], json({"rbind", "rw"}));
  EXPECT_EQ(edits["hooks"][0]["hookName"], "createRuntime");
  EXPECT_EQ(edits["hooks"][0]["args"],
            json({"pinpoint-cdi-hook", "attach", "42", "--socket", "/run/pinpoint.sock", "--cdi-dir", "/var/run/cdi"}));
  EXPECT_EQ(edits["hooks"][1]["hookName"], "poststop");
  EXPECT_EQ(edits["hooks"][1]["args"][1], "close");
  EXPECT_EQ(CdiQualifiedName(42), "pinpoint.io/slice=L42");
  EXPECT_EQ(CdiSpecFileName(42), "pinpoint.io-slice-L42.json");
}

TEST(CdiSpecTest, WrittenMode0644IntoASafeDirectory) {
  TestDir dir;
  ASSERT_TRUE(WriteCdiSpec(dir.path() + "/cdi", "a.json", "{}\n").ok());
  struct stat st {};
  ASSERT_EQ(::stat((dir.path() + "/cdi/a.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_EQ(Slurp(dir.path() + "/cdi/a.json"), "{}\n");
  EXPECT_EQ(WriteCdiSpec("relative/cdi", "a.json", "{}").code(), Code::kInvalidArgument);
}

// Attacks on the spec directory: one others may write, a link in its place, a link planted at
// the spec's name. None is written through.
TEST(CdiSpecTest, AnUnsafeDirectoryOrAPlantedLinkIsNeverWrittenThrough) {
  TestDir dir;
  std::string open = dir.path() + "/open";
  fs::create_directory(open);
  ::chmod(open.c_str(), 0777);
  EXPECT_EQ(WriteCdiSpec(open, "a.json", "{}").code(), Code::kFailedPrecondition);
  EXPECT_FALSE(fs::exists(open + "/a.json"));

  std::string real = dir.path() + "/real";
  fs::create_directory(real);
  fs::create_directory_symlink(real, dir.path() + "/link");
  EXPECT_FALSE(WriteCdiSpec(dir.path() + "/link", "a.json", "{}").ok());
  EXPECT_FALSE(fs::exists(real + "/a.json"));

  std::string victim = dir.path() + "/victim";
  std::ofstream(victim) << "precious";
  fs::create_symlink(victim, real + "/b.json");
  ASSERT_TRUE(WriteCdiSpec(real, "b.json", "{}\n").ok());
  EXPECT_EQ(Slurp(victim), "precious") << "the planted link was followed";
  EXPECT_FALSE(fs::is_symlink(real + "/b.json"));
}

// Attack: the hook a spec names runs as root; a hook in a directory others may write is refused.
TEST(CdiSpecTest, AHookOthersCouldSwapIsRefused) {
  TestDir dir;
  std::string open = dir.path() + "/open";
  fs::create_directory(open);
  std::ofstream(open + "/hook") << "#!/bin/sh\n";
  ::chmod(open.c_str(), 0777);
  auto refused = CheckHookPath(open + "/hook", ::geteuid());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(open), std::string::npos) << refused.status().message();
  ::chmod(open.c_str(), 0755);
  ::chmod((open + "/hook").c_str(), 0777);
  EXPECT_FALSE(CheckHookPath(open + "/hook", ::geteuid()).ok()) << "a world-writable hook";
  ::chmod((open + "/hook").c_str(), 0755);
  fs::create_symlink(open + "/hook", dir.path() + "/link");
  auto resolved = CheckHookPath(dir.path() + "/link", ::geteuid());
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  EXPECT_EQ(*resolved, fs::canonical(open + "/hook").string()) << "the spec names the file, not the link";
  EXPECT_FALSE(CheckHookPath(dir.path() + "/missing", ::geteuid()).ok());
  EXPECT_FALSE(CheckHookPath(open, ::geteuid()).ok()) << "a directory is no hook";
}

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
  int rc = RunCdiHook(static_cast<int>(argv.size()), argv.data(), in, e);
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
  EXPECT_EQ(Hook({"pinpoint-cdi-hook", "attach", "4", "--socket", dir.path() + "/none"}, big, &err), 1);
  EXPECT_NE(err.find("larger than 65536 bytes"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  // A bundle that is a link is not read through (config.json would be another directory's).
  fs::create_directory(dir.path() + "/real");
  std::ofstream(dir.path() + "/real/config.json") << R"({"process": {"user": {"uid": 0}}})";
  fs::create_directory_symlink(dir.path() + "/real", dir.path() + "/bundle");
  std::string state = R"({"pid": 1, "bundle": ")" + dir.path() + "/bundle\"}";
  EXPECT_EQ(Hook({"pinpoint-cdi-hook", "attach", "4", "--socket", dir.path() + "/none"}, state, &err), 1);
  EXPECT_EQ(err.find("not running"), std::string::npos) << "it went on to pinpointd: " << err;
}

}  // namespace
}  // namespace pinpoint::cli
