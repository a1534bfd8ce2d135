// The CDI spec of a lease (spec.h): what it holds, where it is written and what is refused.
#include "cdi/spec.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/raw_control.h"
#include "common/test_dir.h"

namespace pinpoint::cdi {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

LeaseEdits MpsEdits() {
  LeaseEdits e;
  e.env = {{"CUDA_VISIBLE_DEVICES", "GPU-1"},
           {"CUDA_MPS_PIPE_DIRECTORY", "/run/pinpoint/mps/0-1000"}};
  e.device_nodes = {"/dev/nvidia0", "/var/lib/pinpoint/simdev/nvidiactl"};
  e.mounts = {{"/run/pinpoint/mps/0-1000", "/run/pinpoint/mps/0-1000", false}};
  return e;
}

TEST(CdiSpecTest, OneDeviceWithTheLeasesEditsAndItsHooks) {
  json spec = Spec(42, MpsEdits(), "/usr/libexec/pinpoint/pinpoint-cdi-hook", "/run/pinpoint.sock",
                   "/var/run/cdi");
  EXPECT_EQ(spec["cdiVersion"], "0.5.0");
  EXPECT_EQ(spec["kind"], "pinpoint.io/slice");
  ASSERT_EQ(spec["devices"].size(), 1u);
  const json& d = spec["devices"][0];
  EXPECT_EQ(d["name"], "L42");
  const json& edits = d["containerEdits"];
  EXPECT_EQ(edits["env"], json({"CUDA_MPS_PIPE_DIRECTORY=/run/pinpoint/mps/0-1000",
                                "CUDA_VISIBLE_DEVICES=GPU-1"}));
  EXPECT_EQ(edits["deviceNodes"][1],
            json({{"path", "/dev/nvidiactl"}, {"hostPath", "/var/lib/pinpoint/simdev/nvidiactl"}}));
  EXPECT_EQ(edits["mounts"][0]["options"], json({"rbind", "rw"}));
  EXPECT_EQ(edits["hooks"][0]["hookName"], "createRuntime");
  EXPECT_EQ(edits["hooks"][0]["args"], json({"pinpoint-cdi-hook", "attach", "42", "--socket",
                                             "/run/pinpoint.sock", "--cdi-dir", "/var/run/cdi"}));
  EXPECT_EQ(edits["hooks"][1]["hookName"], "poststop");
  EXPECT_EQ(edits["hooks"][1]["args"][1], "close");
  EXPECT_EQ(QualifiedName(42), "pinpoint.io/slice=L42");
  EXPECT_EQ(SpecFileName(42), "pinpoint.io-slice-L42.json");
}

TEST(CdiSpecTest, WrittenMode0644IntoASafeDirectory) {
  TestDir dir;
  SpecDir specs(dir.path() + "/cdi");
  ASSERT_TRUE(specs.Write(7, json::object()).ok());
  EXPECT_EQ(specs.PathOf(7), dir.path() + "/cdi/pinpoint.io-slice-L7.json");
  struct stat st {};
  ASSERT_EQ(::stat(specs.PathOf(7).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_EQ(Slurp(specs.PathOf(7)), "{}\n");
  EXPECT_EQ(SpecDir("relative/cdi").Write(7, json::object()).code(), Code::kInvalidArgument);
  ASSERT_TRUE(specs.Remove(7).ok());
  EXPECT_FALSE(fs::exists(specs.PathOf(7)));
  EXPECT_TRUE(specs.Remove(7).ok()) << "a spec already gone";
  EXPECT_TRUE(SpecDir(dir.path() + "/missing").Remove(7).ok()) << "no directory, no spec";
}

// Attacks on the spec directory: one others may write, a link in its place, a link planted at
// the spec's name. None is written or removed through.
TEST(CdiSpecTest, AnUnsafeDirectoryOrAPlantedLinkIsNeverWrittenThrough) {
  TestDir dir;
  std::string open = dir.path() + "/open";
  fs::create_directory(open);
  ::chmod(open.c_str(), 0777);
  EXPECT_EQ(SpecDir(open).Write(1, json::object()).code(), Code::kFailedPrecondition);
  EXPECT_FALSE(fs::exists(SpecDir(open).PathOf(1)));

  std::string real = dir.path() + "/real";
  fs::create_directory(real);
  fs::create_directory_symlink(real, dir.path() + "/link");
  EXPECT_FALSE(SpecDir(dir.path() + "/link").Write(1, json::object()).ok());
  EXPECT_FALSE(fs::exists(SpecDir(real).PathOf(1)));
  std::ofstream(SpecDir(real).PathOf(3)) << "kept";
  EXPECT_FALSE(SpecDir(dir.path() + "/link").Remove(3).ok()) << "a linked directory is not opened";
  EXPECT_EQ(Slurp(SpecDir(real).PathOf(3)), "kept");

  std::string victim = dir.path() + "/victim";
  std::ofstream(victim) << "precious";
  fs::create_symlink(victim, SpecDir(real).PathOf(2));
  ASSERT_TRUE(SpecDir(real).Write(2, json::object()).ok());
  EXPECT_EQ(Slurp(victim), "precious") << "the planted link was followed";
  EXPECT_FALSE(fs::is_symlink(SpecDir(real).PathOf(2)));
  fs::create_symlink(victim, SpecDir(real).PathOf(4));
  ASSERT_TRUE(SpecDir(real).Remove(4).ok());
  EXPECT_EQ(Slurp(victim), "precious") << "the link is removed, not its target";
  EXPECT_FALSE(fs::is_symlink(SpecDir(real).PathOf(4)));
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
  EXPECT_EQ(*resolved, fs::canonical(open + "/hook").string())
      << "the spec names the file, not the link";
  EXPECT_FALSE(CheckHookPath(dir.path() + "/missing", ::geteuid()).ok());
  EXPECT_FALSE(CheckHookPath(open, ::geteuid()).ok()) << "a directory is no hook";
}

}  // namespace
}  // namespace pinpoint::cdi
