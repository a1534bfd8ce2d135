#include "gpu/backend_factory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

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

TEST(BackendFactoryTest, AutoFallsBackWhenNvmlIsMissing) {
  std::string why;
  Result<std::unique_ptr<GpuBackend>> backend =
      MakeGpuBackend("auto", &why, {.nvml_library = kMissingLibrary});
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  EXPECT_EQ((*backend)->Kind(), "simulated:h100x2");
  EXPECT_THAT(why, StartsWith("no NVIDIA GPU: NVML not available ("));
  EXPECT_THAT(why, HasSubstr("cannot open shared object file"));
  EXPECT_THAT(why, EndsWith("); using simulated node h100x2"));
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
  GpuBackendOptions options_{.nvml_library = FAKE_NVML_PATH};
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
  EXPECT_EQ(why, "no NVIDIA GPU: NVML reports no GPU; using simulated node h100x2");
  EXPECT_EQ(fake_.InitRefs(), 0);  // the unused NVML backend was released
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
