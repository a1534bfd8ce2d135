#include "gpu/device_probe.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/test_dir.h"

namespace pinpoint::gpu {
namespace {

namespace fs = std::filesystem;

// A machine laid out in a directory: each path is created as an empty file (its parents as
// directories). Device nodes need no mknod: only names are read.
struct Machine {
  explicit Machine(const std::vector<std::string>& paths) {
    for (const std::string& p : paths) {
      fs::path full = fs::path(dir.path()) / p;
      fs::create_directories(full.parent_path());
      std::ofstream(full.string()).put('\n');
    }
  }
  TestDir dir;
};

TEST(FindNvidiaDeviceTest, Table) {
  struct Case {
    const char* name;
    std::vector<std::string> paths;
    std::string want;
  };
  const Case cases[] = {
      {"empty machine", {}, ""},
      {"other devices only", {"dev/null", "dev/tty0", "dev/dri/card0"}, ""},
      {"helper nodes only",
       {"dev/nvidia-uvm", "dev/nvidia-modeset", "dev/nvidia-caps/nvidia-cap1"},
       ""},
      {"nvidia prefix without digits", {"dev/nvidiax", "dev/nvidia"}, ""},
      {"first GPU node", {"dev/null", "dev/nvidia0"}, "/dev/nvidia0"},
      {"a later GPU node", {"dev/nvidia7"}, "/dev/nvidia7"},
      {"control node only", {"dev/nvidiactl"}, "/dev/nvidiactl"},
      {"GPU node before control node", {"dev/nvidiactl", "dev/nvidia1"}, "/dev/nvidia1"},
      {"driver's proc entry only",
       {"proc/driver/nvidia/gpus/0000:65:00.0/information"},
       "/proc/driver/nvidia/gpus/0000:65:00.0"},
      {"proc directory without GPUs", {"proc/driver/nvidia/version"}, ""},
      {"device node wins over proc",
       {"dev/nvidia0", "proc/driver/nvidia/gpus/0000:65:00.0/information"},
       "/dev/nvidia0"},
  };
  for (const Case& c : cases) {
    Machine m(c.paths);
    EXPECT_EQ(FindNvidiaDevice(m.dir.path()), c.want) << c.name;
  }
}

TEST(FindNvidiaDeviceTest, MissingRootHoldsNothing) {
  EXPECT_EQ(FindNvidiaDevice("/nonexistent/pinpoint-root"), "");
}

}  // namespace
}  // namespace pinpoint::gpu
