#include "gpu/nvml_backend.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "fake_nvml/fake_nvml_control.h"
#include "gpu/mig_report.h"
#include "gpu/nvml_api.h"

#ifndef FAKE_NVML_PATH
#error "FAKE_NVML_PATH must name the fake NVML library (see the end of CMakeLists.txt)"
#endif

namespace pinpoint::gpu {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr uint64_t kMiB = 1024ULL * 1024ULL;
constexpr uint64_t kGiB = 1024ULL * kMiB;

class NvmlBackendTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fake_.ok()) << "cannot load " << FAKE_NVML_PATH; }

  std::unique_ptr<GpuBackend> Create() {
    Result<std::unique_ptr<GpuBackend>> backend = NvmlBackend::Create(FAKE_NVML_PATH);
    EXPECT_TRUE(backend.ok()) << backend.status().ToString();
    return backend.ok() ? std::move(backend).value() : nullptr;
  }

  FakeNvmlControl fake_{FAKE_NVML_PATH};
};

TEST(NvmlBackendLoadTest, MissingLibraryIsUnavailableWithOneLine) {
  Result<std::unique_ptr<GpuBackend>> backend =
      NvmlBackend::Create("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), Code::kUnavailable);
  EXPECT_THAT(backend.status().message(), StartsWith("NVML not available: "));
  EXPECT_THAT(backend.status().message(), HasSubstr("cannot open shared object file"));
  EXPECT_EQ(backend.status().message().find('\n'), std::string::npos);
}

TEST(NvmlBackendLoadTest, LibraryWithoutNvmlIsUnavailable) {
  Result<std::unique_ptr<GpuBackend>> backend = NvmlBackend::Create("libm.so.6");
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), Code::kUnavailable);
  EXPECT_THAT(backend.status().message(), HasSubstr("lacks nvmlInit_v2"));
}

TEST_F(NvmlBackendTest, InitFailureIsUnavailable) {
  setenv("FAKE_NVML_INIT_FAIL", "1", 1);
  Result<std::unique_ptr<GpuBackend>> backend = NvmlBackend::Create(FAKE_NVML_PATH);
  unsetenv("FAKE_NVML_INIT_FAIL");
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), Code::kUnavailable);
  EXPECT_EQ(backend.status().message(),
            "NVML not available: nvmlInit_v2 failed: Driver Not Loaded");
  EXPECT_EQ(fake_.InitRefs(), 0);
}

TEST_F(NvmlBackendTest, InstancesInitialiseAndShutDownNvml) {
  std::unique_ptr<GpuBackend> first = Create();
  std::unique_ptr<GpuBackend> second = Create();
  EXPECT_EQ(fake_.InitRefs(), 2);
  first.reset();
  EXPECT_EQ(fake_.InitRefs(), 1);
  second.reset();
  EXPECT_EQ(fake_.InitRefs(), 0);
}

TEST_F(NvmlBackendTest, KindAndDriverVersion) {
  std::unique_ptr<GpuBackend> backend = Create();
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->Kind(), "nvml");
  EXPECT_EQ(backend->DriverVersion(), "580.0-fake");
}

TEST_F(NvmlBackendTest, InventoryReadsWholeGpu) {
  std::unique_ptr<GpuBackend> backend = Create();
  ASSERT_NE(backend, nullptr);
  Result<std::vector<GpuInfo>> gpus = backend->Inventory();
  ASSERT_TRUE(gpus.ok()) << gpus.status().ToString();
  ASSERT_EQ(gpus->size(), 2u);
  const GpuInfo& gpu = (*gpus)[0];
  EXPECT_EQ(gpu.index, 0);
  EXPECT_EQ(gpu.uuid, "GPU-fa4e0000-0000-4000-8000-000000000000");
  EXPECT_EQ(gpu.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpu.mem_total_bytes, 81559 * kMiB);
  EXPECT_EQ(gpu.sm_count, 132);  // 16896 cores at 128 per SM (compute capability 9.0)
  EXPECT_EQ(gpu.compute_mode, ComputeMode::kExclusiveProcess);
  EXPECT_FALSE(gpu.mig_enabled);  // nvmlDeviceGetMigMode: NOT_SUPPORTED
  EXPECT_TRUE(gpu.migs.empty());
  EXPECT_EQ(gpu.numa_node, 65);         // the lowest bit of the affinity mask, past the first word
  EXPECT_EQ((*gpus)[1].numa_node, -1);  // nvmlDeviceGetMemoryAffinity: NOT_SUPPORTED
}

TEST_F(NvmlBackendTest, InventoryReadsMigInstancesSkippingEmptySlots) {
  std::unique_ptr<GpuBackend> backend = Create();
  ASSERT_NE(backend, nullptr);
  Result<std::vector<GpuInfo>> gpus = backend->Inventory();
  ASSERT_TRUE(gpus.ok()) << gpus.status().ToString();
  const GpuInfo& gpu = (*gpus)[1];
  EXPECT_EQ(gpu.name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(gpu.compute_mode, ComputeMode::kDefault);
  EXPECT_EQ(gpu.sm_count, 0);  // no core count with MIG enabled
  ASSERT_TRUE(gpu.mig_enabled);
  ASSERT_EQ(gpu.migs.size(), 2u);
  EXPECT_EQ(gpu.migs[0].uuid, "MIG-fa4e0000-0001-0000-8000-000000000000");
  EXPECT_EQ(gpu.migs[0].profile, "3g.40gb");
  EXPECT_EQ(gpu.migs[0].gpu_instance_id, 2u);
  EXPECT_EQ(gpu.migs[0].compute_instance_id, 0u);
  EXPECT_EQ(gpu.migs[0].sm_count, 42);
  EXPECT_EQ(gpu.migs[0].mem_total_bytes, 40448 * kMiB);
  EXPECT_EQ(gpu.migs[1].profile, "1g.10gb");
  EXPECT_EQ(gpu.migs[1].gpu_instance_id, 9u);
  EXPECT_EQ(gpu.migs[1].sm_count, 14);
  EXPECT_EQ(gpu.migs[1].mem_total_bytes, 9984 * kMiB);  // from the attributes' memorySizeMB
}

TEST_F(NvmlBackendTest, SampleReadsCountersAndMarksUnsupportedFields) {
  std::unique_ptr<GpuBackend> backend = Create();
  ASSERT_NE(backend, nullptr);
  Result<GpuSample> h100 = backend->Sample(0);
  ASSERT_TRUE(h100.ok()) << h100.status().ToString();
  EXPECT_EQ(h100->index, 0);
  EXPECT_EQ(h100->mem_used_bytes, 3 * kGiB);
  EXPECT_EQ(h100->power_mw, 350000u);
  EXPECT_EQ(h100->energy_mj, 5'000'000u);
  EXPECT_EQ(h100->utilization_pct, -1);  // nvmlDeviceGetUtilizationRates is not exported

  Result<GpuSample> a100 = backend->Sample(1);
  ASSERT_TRUE(a100.ok()) << a100.status().ToString();
  EXPECT_EQ(a100->power_mw, 0u);  // NOT_SUPPORTED
  EXPECT_EQ(a100->energy_mj, 0u);
  EXPECT_EQ(a100->utilization_pct, -1);
}

TEST_F(NvmlBackendTest, EnergyCounterAdvancesBetweenSamples) {
  std::unique_ptr<GpuBackend> backend = Create();
  ASSERT_NE(backend, nullptr);
  Result<GpuSample> first = backend->Sample(0);
  Result<GpuSample> second = backend->Sample(0);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(second->energy_mj - first->energy_mj, 1500u);
}

TEST_F(NvmlBackendTest, MergesComputeAndMpsProcessesByPid) {
  std::unique_ptr<GpuBackend> backend = Create();
  ASSERT_NE(backend, nullptr);
  Result<GpuSample> sample = backend->Sample(0);
  ASSERT_TRUE(sample.ok()) << sample.status().ToString();
  const std::vector<GpuProcess>& p = sample->processes;
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p[0].pid, 1000);  // in both lists: one entry, an MPS client, the larger reading
  EXPECT_TRUE(p[0].mps_client);
  EXPECT_EQ(p[0].used_bytes, 2 * kGiB);
  EXPECT_EQ(p[1].pid, 1001);
  EXPECT_FALSE(p[1].mps_client);
  EXPECT_EQ(p[1].used_bytes, 32 * kMiB);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(p[2 + i].pid, 3000 + i);
    EXPECT_TRUE(p[2 + i].mps_client);
    EXPECT_EQ(p[2 + i].used_bytes, 512 * kMiB);
    EXPECT_EQ(p[2 + i].gpu_instance_id, kNoMigInstance);
  }
}

TEST_F(NvmlBackendTest, GrowsTheProcessBufferWhenNvmlAsks) {
  std::unique_ptr<GpuBackend> backend = Create();
  ASSERT_NE(backend, nullptr);
  fake_.SetMpsClients(100);
  int queries_before = fake_.ProcessQueries();
  Result<GpuSample> sample = backend->Sample(0);
  ASSERT_TRUE(sample.ok()) << sample.status().ToString();
  EXPECT_EQ(sample->processes.size(), 102u);
  EXPECT_EQ(sample->processes.back().pid, 3099);
  // Compute list fits at once; the MPS list needed a second, larger call.
  EXPECT_EQ(fake_.ProcessQueries() - queries_before, 3);
}

TEST_F(NvmlBackendTest, MigProcessesCarryInstanceIds) {
  std::unique_ptr<GpuBackend> backend = Create();
  ASSERT_NE(backend, nullptr);
  Result<GpuSample> sample = backend->Sample(1);
  ASSERT_TRUE(sample.ok()) << sample.status().ToString();
  ASSERT_EQ(sample->processes.size(), 2u);
  EXPECT_EQ(sample->processes[0].pid, 4000);
  EXPECT_EQ(sample->processes[0].gpu_instance_id, 2u);
  EXPECT_EQ(sample->processes[0].compute_instance_id, 0u);
  EXPECT_EQ(sample->processes[0].used_bytes, kGiB);
  EXPECT_EQ(sample->processes[1].gpu_instance_id, 9u);
  EXPECT_EQ(sample->processes[1].used_bytes, 0u);  // NVML_VALUE_NOT_AVAILABLE
}

TEST_F(NvmlBackendTest, UnknownIndexIsNotFound) {
  std::unique_ptr<GpuBackend> backend = Create();
  ASSERT_NE(backend, nullptr);
  for (int index : {-1, 2, 100}) {
    Result<GpuSample> sample = backend->Sample(index);
    ASSERT_FALSE(sample.ok());
    EXPECT_EQ(sample.status().code(), Code::kNotFound) << index;
  }
}

TEST_F(NvmlBackendTest, LostGpuIsUnavailable) {
  std::unique_ptr<GpuBackend> backend = Create();
  ASSERT_NE(backend, nullptr);
  fake_.SetLost(0, true);
  Result<GpuSample> sample = backend->Sample(0);
  ASSERT_FALSE(sample.ok());
  EXPECT_EQ(sample.status().code(), Code::kUnavailable);
  EXPECT_THAT(sample.status().message(), StartsWith("GPU 0: "));
  EXPECT_THAT(sample.status().message(), HasSubstr("GPU is lost"));
  EXPECT_TRUE(backend->Sample(1).ok());
  Result<std::vector<GpuInfo>> gpus = backend->Inventory();
  ASSERT_FALSE(gpus.ok());
  EXPECT_EQ(gpus.status().code(), Code::kUnavailable);
  fake_.SetLost(0, false);
  EXPECT_TRUE(backend->Sample(0).ok());
}

// The driver lists MIG profiles and placements read-only, MIG enabled or not (GPU 0 has it off).
TEST_F(NvmlBackendTest, MigProfilesAndTheirPlacementsAreRead) {
  std::unique_ptr<GpuBackend> backend = Create();
  ASSERT_NE(backend, nullptr);
  for (int gpu : {0, 1}) {
    Result<std::vector<MigProfileInfo>> profiles = backend->MigProfiles(gpu);
    ASSERT_TRUE(profiles.ok()) << profiles.status().ToString();
    ASSERT_EQ(profiles->size(), 7u);
    const MigProfileInfo& small = profiles->front();
    EXPECT_EQ(small.name, "1g.10gb") << "NVML's \"MIG \" prefix is dropped";
    EXPECT_EQ(small.profile_id, 19u);
    EXPECT_EQ(small.compute_slices, 1);
    EXPECT_EQ(small.instance_count, 7);
    EXPECT_EQ(small.mem_bytes, 9984 * kMiB);
    ASSERT_EQ(small.placements.size(), 7u);
    EXPECT_EQ(small.placements[6], (MigProfileInfo::Placement{6, 1}));
    const MigProfileInfo* three = nullptr;
    for (const auto& p : *profiles)
      if (p.name == "3g.40gb") three = &p;
    ASSERT_NE(three, nullptr);
    EXPECT_EQ(three->placements, (std::vector<MigProfileInfo::Placement>{{0, 4}, {4, 4}}));
  }
  EXPECT_EQ(backend->MigProfiles(5).status().code(), Code::kNotFound);
}

TEST_F(NvmlBackendTest, TheMigReportListsEachGpusProfilesAndPlacements) {
  std::unique_ptr<GpuBackend> backend = Create();
  ASSERT_NE(backend, nullptr);
  Result<std::string> report = MigReport(*backend);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_THAT(*report, HasSubstr("GPU 0 NVIDIA H100 80GB HBM3: MIG disabled\n"));
  EXPECT_THAT(*report, HasSubstr("GPU 1 NVIDIA A100-SXM4-80GB: MIG enabled\n"));
  EXPECT_THAT(
      *report,
      HasSubstr("3g.40gb          id  9  3g   40320 MiB   60 SMs  x2  placements 0:4 4:4\n"));
  EXPECT_THAT(
      *report,
      HasSubstr(
          "1g.20gb          id 15  1g   20096 MiB   26 SMs  x4  placements 0:2 2:2 4:2 6:2\n"));
}

TEST_F(NvmlBackendTest, NoGpusGivesAnEmptyInventory) {
  fake_.SetDeviceCount(0);
  std::unique_ptr<GpuBackend> backend = Create();
  ASSERT_NE(backend, nullptr);
  Result<std::vector<GpuInfo>> gpus = backend->Inventory();
  ASSERT_TRUE(gpus.ok());
  EXPECT_TRUE(gpus->empty());
  EXPECT_EQ(backend->Sample(0).status().code(), Code::kNotFound);
}

TEST(NvmlApiTest, CoresPerSmByComputeCapability) {
  EXPECT_EQ(nvml::CoresPerSm(7, 0), 64);   // V100
  EXPECT_EQ(nvml::CoresPerSm(8, 0), 64);   // A100
  EXPECT_EQ(nvml::CoresPerSm(8, 6), 128);  // GA10x
  EXPECT_EQ(nvml::CoresPerSm(9, 0), 128);  // H100, H200
  EXPECT_EQ(nvml::CoresPerSm(10, 0), 128);
  EXPECT_EQ(nvml::CoresPerSm(1, 0), 0);
}

TEST(NvmlApiTest, UnsupportedCodes) {
  EXPECT_TRUE(nvml::IsUnsupported(nvml::kErrorNotSupported));
  EXPECT_TRUE(nvml::IsUnsupported(nvml::kErrorFunctionNotFound));
  EXPECT_FALSE(nvml::IsUnsupported(nvml::kErrorGpuIsLost));
  EXPECT_FALSE(nvml::IsUnsupported(nvml::kErrorUnknown));
}

}  // namespace
}  // namespace pinpoint::gpu
