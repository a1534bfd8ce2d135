#include "gpu/backend_factory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/test_dir.h"
#include "fake_nvml/fake_nvml_control.h"

namespace pinpoint::gpu {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kMissingLibrary[] = "/nonexistent/libnvidia-ml.so.1";

TEST(BackendFactoryTest, SimulatedPreset) {
  std::string why;
  Result<std::unique_ptr<GpuBackend>> backend = MakeGpuBackend("simulated:a100x8-mig", &why);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  EXPECT_EQ((*backend)->Kind(), "simulated:a100x8-mig");
  EXPECT_EQ(why, "using simulated node a100x8-mig (as asked)");
}

TEST(BackendFactoryTest, UnknownPresetIsInvalid) {
  Result<std::unique_ptr<GpuBackend>> backend = MakeGpuBackend("simulated:h100x9", nullptr);
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(backend.status().message(), HasSubstr("'h100x9' (known: h100x2,"));
}

TEST(BackendFactoryTest, BadSpecsAreInvalid) {
  for (const char* spec : {"", "cuda", "simulated", "NVML", "simulated-file:"}) {
    Result<std::unique_ptr<GpuBackend>> backend = MakeGpuBackend(spec, nullptr);
    ASSERT_FALSE(backend.ok()) << spec;
    EXPECT_EQ(backend.status().code(), Code::kInvalidArgument) << spec;
    EXPECT_EQ(backend.status().message().find('\n'), std::string::npos);
  }
  EXPECT_THAT(MakeGpuBackend("cuda", nullptr).status().message(),
              StartsWith("unknown GPU backend 'cuda' (expected auto, nvml, simulated:<preset>"));
}

TEST(BackendFactoryTest, SimulatedFile) {
  std::string path = ::testing::TempDir() + "/pinpoint_factory_node.json";
  std::ofstream(path) << R"({"gpus": [{"mem": "24G", "sm_count": 60}]})";
  std::string why;
  Result<std::unique_ptr<GpuBackend>> backend = MakeGpuBackend("simulated-file:" + path, &why);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  EXPECT_EQ((*backend)->Kind(), "simulated:config");
  EXPECT_THAT(why, HasSubstr(path));
  EXPECT_EQ(MakeGpuBackend("simulated-file:" + path + ".missing", nullptr).status().code(),
            Code::kNotFound);
}

TEST(ChooseAutoBackendTest, Table) {
  struct Case {
    NvmlOutcome nvml;
    bool device;
    AutoChoice want;
  };
  const Case cases[] = {
      {NvmlOutcome::kHasGpus, true, AutoChoice::kNvml},
      {NvmlOutcome::kHasGpus, false, AutoChoice::kNvml},  // NVML is the better witness
      {NvmlOutcome::kInventoryFails, true, AutoChoice::kNvml},
      {NvmlOutcome::kInventoryFails, false, AutoChoice::kNvml},
      {NvmlOutcome::kNoGpu, true, AutoChoice::kRefuse},
      {NvmlOutcome::kNoGpu, false, AutoChoice::kSimulated},
      {NvmlOutcome::kUnavailable, true, AutoChoice::kRefuse},
      {NvmlOutcome::kUnavailable, false, AutoChoice::kSimulated},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ChooseAutoBackend(c.nvml, c.device), c.want)
        << "nvml " << static_cast<int>(c.nvml) << ", device " << c.device;
  }
}

// A machine laid out in a directory, for GpuBackendOptions::device_root.
class MachineRoot {
 public:
  // With /dev/nvidia0 and /dev/nvidiactl, or with neither.
  explicit MachineRoot(bool gpu) {
    std::string dev = dir_.path() + "/dev";
    std::filesystem::create_directories(dev);
    std::ofstream(dev + "/null");
    if (gpu) {
      std::ofstream(dev + "/nvidia0");
      std::ofstream(dev + "/nvidiactl");
    }
  }
  const std::string& path() const { return dir_.path(); }

 private:
  TestDir dir_;
};

TEST(BackendFactoryTest, AutoFallsBackWhenNvmlIsMissingOnAMachineWithoutGpu) {
  MachineRoot machine(/*gpu=*/false);
  std::string why;
  Result<std::unique_ptr<GpuBackend>> backend = MakeGpuBackend(
      "auto", &why, {.nvml_library = kMissingLibrary, .device_root = machine.path()});
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  EXPECT_EQ((*backend)->Kind(), "simulated:h100x2");
  EXPECT_THAT(why, StartsWith("no NVIDIA device on this machine: running a SIMULATED node h100x2 "
                              "(NVML not available ("));
  EXPECT_THAT(why, HasSubstr("cannot open shared object file"));
  EXPECT_THAT(why, EndsWith("))"));
}

TEST(BackendFactoryTest, AutoRefusesWhenNvmlIsMissingOnAMachineWithAGpu) {
  MachineRoot machine(/*gpu=*/true);
  std::string why = "untouched";
  Result<std::unique_ptr<GpuBackend>> backend = MakeGpuBackend(
      "auto", &why, {.nvml_library = kMissingLibrary, .device_root = machine.path()});
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), Code::kUnavailable);
  EXPECT_THAT(
      backend.status().message(),
      StartsWith("this machine has an NVIDIA device (/dev/nvidia0) but NVML not available ("));
  EXPECT_THAT(backend.status().message(),
              EndsWith("): repair the driver until nvidia-smi works, or set backend to "
                       "simulated:<preset> to run a simulated node on purpose"));
  EXPECT_EQ(backend.status().message().find('\n'), std::string::npos);
  EXPECT_EQ(why, "untouched");
}

TEST(BackendFactoryTest, SimulatedAsAskedIgnoresTheMachine) {
  MachineRoot machine(/*gpu=*/true);
  Result<std::unique_ptr<GpuBackend>> backend =
      MakeGpuBackend("simulated:h100x2", nullptr,
                     {.nvml_library = kMissingLibrary, .device_root = machine.path()});
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  EXPECT_EQ((*backend)->Kind(), "simulated:h100x2");
}

TEST(BackendFactoryTest, NvmlSpecReportsTheLoadError) {
  Result<std::unique_ptr<GpuBackend>> backend =
      MakeGpuBackend("nvml", nullptr, {.nvml_library = kMissingLibrary});
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), Code::kUnavailable);
}

class BackendFactoryNvmlTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fake_.ok()); }
  FakeNvmlControl fake_{FAKE_NVML_PATH};
  MachineRoot no_gpu_{false};
  MachineRoot gpu_{true};
  GpuBackendOptions options_{.nvml_library = FAKE_NVML_PATH, .device_root = no_gpu_.path()};
};

TEST_F(BackendFactoryNvmlTest, AutoPicksNvmlWhenItHasGpus) {
  std::string why;
  Result<std::unique_ptr<GpuBackend>> backend = MakeGpuBackend("auto", &why, options_);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  EXPECT_EQ((*backend)->Kind(), "nvml");
  EXPECT_EQ(why, "using NVML: 2 GPUs, driver 580.0-fake");
}

TEST_F(BackendFactoryNvmlTest, AutoFallsBackWhenNvmlHasNoGpu) {
  fake_.SetDeviceCount(0);
  std::string why;
  Result<std::unique_ptr<GpuBackend>> backend = MakeGpuBackend("auto", &why, options_);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  EXPECT_EQ((*backend)->Kind(), "simulated:h100x2");
  EXPECT_EQ(
      why,
      "no NVIDIA device on this machine: running a SIMULATED node h100x2 (NVML reports no GPU)");
  EXPECT_EQ(fake_.InitRefs(), 0);  // the unused NVML backend was released
}

TEST_F(BackendFactoryNvmlTest, AutoRefusesWhenNvmlHasNoGpuOnAMachineWithAGpu) {
  fake_.SetDeviceCount(0);
  options_.device_root = gpu_.path();
  Result<std::unique_ptr<GpuBackend>> backend = MakeGpuBackend("auto", nullptr, options_);
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), Code::kUnavailable);
  EXPECT_THAT(
      backend.status().message(),
      StartsWith("this machine has an NVIDIA device (/dev/nvidia0) but NVML reports no GPU: "));
  EXPECT_EQ(fake_.InitRefs(), 0);
}

TEST_F(BackendFactoryNvmlTest, AutoRefusesWhenNvmlInitFailsOnAMachineWithAGpu) {
  options_.device_root = gpu_.path();
  setenv("FAKE_NVML_INIT_FAIL", "1", 1);
  Result<std::unique_ptr<GpuBackend>> backend = MakeGpuBackend("auto", nullptr, options_);
  unsetenv("FAKE_NVML_INIT_FAIL");
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), Code::kUnavailable);
  EXPECT_THAT(backend.status().message(),
              StartsWith("this machine has an NVIDIA device (/dev/nvidia0) but NVML not available "
                         "(nvmlInit_v2 failed: "));
}

TEST_F(BackendFactoryNvmlTest, AutoPicksNvmlOnAMachineWithAGpu) {
  options_.device_root = gpu_.path();
  Result<std::unique_ptr<GpuBackend>> backend = MakeGpuBackend("auto", nullptr, options_);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  EXPECT_EQ((*backend)->Kind(), "nvml");
}

TEST_F(BackendFactoryNvmlTest, AutoKeepsNvmlWhenAGpuIsLost) {
  fake_.SetLost(1, true);
  std::string why;
  Result<std::unique_ptr<GpuBackend>> backend = MakeGpuBackend("auto", &why, options_);
  ASSERT_TRUE(backend.ok());
  EXPECT_EQ((*backend)->Kind(), "nvml");
  EXPECT_THAT(why, StartsWith("using NVML, whose inventory fails now (GPU 1: "));
}

TEST_F(BackendFactoryNvmlTest, NvmlSpec) {
  std::string why;
  Result<std::unique_ptr<GpuBackend>> backend = MakeGpuBackend("nvml", &why, options_);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  EXPECT_EQ((*backend)->Kind(), "nvml");
  EXPECT_EQ(why, "using NVML: 2 GPUs, driver 580.0-fake");
}

}  // namespace
}  // namespace pinpoint::gpu
