#include "gpu/simulated_backend.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "gpu/mig_profiles.h"

namespace pinpoint::gpu {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr uint64_t kSimMiB = 1024ULL * 1024ULL;
constexpr uint64_t kSimGiB = 1024ULL * kSimMiB;

std::unique_ptr<SimulatedBackend> Preset(const std::string& name) {
  Result<std::unique_ptr<SimulatedBackend>> backend = SimulatedBackend::FromPreset(name);
  EXPECT_TRUE(backend.ok()) << backend.status().ToString();
  return backend.ok() ? std::move(backend).value() : nullptr;
}

std::vector<GpuInfo> InventoryOf(GpuBackend& backend) {
  Result<std::vector<GpuInfo>> gpus = backend.Inventory();
  EXPECT_TRUE(gpus.ok()) << gpus.status().ToString();
  return gpus.ok() ? *gpus : std::vector<GpuInfo>{};
}

struct PresetCase {
  const char* preset;
  size_t gpus;
  const char* name;
  uint64_t mem_total_bytes;
  int sm_count;
};

TEST(SimulatedBackendTest, PresetsHaveTheirDocumentedShapes) {
  const PresetCase cases[] = {
      {"h100x2", 2, "NVIDIA H100 80GB HBM3", 81559 * kSimMiB, 132},
      {"a100x8", 8, "NVIDIA A100-SXM4-80GB", 81920 * kSimMiB, 108},
      {"a100x8-mig", 8, "NVIDIA A100-SXM4-80GB", 81920 * kSimMiB, 108},
      {"v100sx8", 8, "Tesla V100S-PCIE-32GB", 32 * kSimGiB, 80},
  };
  for (const PresetCase& c : cases) {
    std::unique_ptr<SimulatedBackend> backend = Preset(c.preset);
    ASSERT_NE(backend, nullptr);
    EXPECT_EQ(backend->Kind(), std::string("simulated:") + c.preset);
    EXPECT_EQ(backend->DriverVersion(), "simulated");
    std::vector<GpuInfo> gpus = InventoryOf(*backend);
    ASSERT_EQ(gpus.size(), c.gpus) << c.preset;
    for (size_t i = 0; i < gpus.size(); ++i) {
      EXPECT_EQ(gpus[i].index, static_cast<int>(i));
      EXPECT_EQ(gpus[i].name, c.name);
      EXPECT_EQ(gpus[i].mem_total_bytes, c.mem_total_bytes);
      EXPECT_EQ(gpus[i].sm_count, c.sm_count);
      EXPECT_EQ(gpus[i].compute_mode, ComputeMode::kDefault);
    }
  }
  EXPECT_EQ(SimulatedBackend::PresetNames(),
            (std::vector<std::string>{"h100x2", "a100x8", "a100x8-mig", "v100sx8"}));
}

TEST(SimulatedBackendTest, MigPresetHasAValidMixedLayout) {
  std::unique_ptr<SimulatedBackend> backend = Preset("a100x8-mig");
  ASSERT_NE(backend, nullptr);
  std::vector<GpuInfo> gpus = InventoryOf(*backend);
  ASSERT_EQ(gpus.size(), 8u);
  std::vector<std::string> profiles;
  for (const MigInfo& m : gpus[0].migs) profiles.push_back(m.profile);
  EXPECT_EQ(profiles, (std::vector<std::string>{"3g.40gb", "2g.20gb", "2g.20gb"}));
  ASSERT_EQ(gpus[1].migs.size(), 7u);
  for (const GpuInfo& gpu : {gpus[0], gpus[1]}) {
    EXPECT_TRUE(gpu.mig_enabled);
    uint64_t mem = 0;
    int sms = 0;
    std::set<uint32_t> instance_ids;
    for (const MigInfo& m : gpu.migs) {
      mem += m.mem_total_bytes;
      sms += m.sm_count;
      instance_ids.insert(m.gpu_instance_id);
    }
    EXPECT_LE(mem, gpu.mem_total_bytes);
    EXPECT_LE(sms, 98);  // seven 14-SM slices
    EXPECT_EQ(instance_ids.size(), gpu.migs.size());
  }
  EXPECT_EQ(gpus[1].migs[0].mem_total_bytes, 9984 * kSimMiB);
  EXPECT_EQ(gpus[1].migs[0].sm_count, 14);
  for (size_t i = 2; i < gpus.size(); ++i) {
    EXPECT_FALSE(gpus[i].mig_enabled);
    EXPECT_TRUE(gpus[i].migs.empty());
  }
}

TEST(SimulatedBackendTest, UuidsAreStablePerPresetAndDistinct) {
  std::set<std::string> seen;
  for (const std::string& preset : SimulatedBackend::PresetNames()) {
    std::vector<GpuInfo> first = InventoryOf(*Preset(preset));
    std::vector<GpuInfo> again = InventoryOf(*Preset(preset));
    ASSERT_EQ(first.size(), again.size());
    for (size_t i = 0; i < first.size(); ++i) {
      EXPECT_EQ(first[i].uuid, again[i].uuid);
      EXPECT_THAT(first[i].uuid, StartsWith("GPU-"));
      EXPECT_TRUE(seen.insert(first[i].uuid).second) << "duplicate " << first[i].uuid;
      for (const MigInfo& m : first[i].migs) {
        EXPECT_THAT(m.uuid, StartsWith("MIG-"));
        EXPECT_TRUE(seen.insert(m.uuid).second) << "duplicate " << m.uuid;
      }
    }
  }
}

TEST(SimulatedBackendTest, UnknownPresetListsTheKnownOnes) {
  Result<std::unique_ptr<SimulatedBackend>> backend = SimulatedBackend::FromPreset("x");
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(backend.status().message(),
            "unknown simulated node 'x' (known: h100x2, a100x8, a100x8-mig, v100sx8)");
}

TEST(SimulatedBackendTest, SampleFollowsTheScript) {
  std::unique_ptr<SimulatedBackend> backend = Preset("h100x2");
  ASSERT_NE(backend, nullptr);
  GpuProcess job{.pid = 42, .used_bytes = 3 * kSimGiB, .mps_client = true};
  GpuProcess other{.pid = 43, .used_bytes = kSimGiB};
  ASSERT_TRUE(backend->SetProcesses(1, {job, other}).ok());
  ASSERT_TRUE(backend->AddEnergy(1, 1234).ok());
  ASSERT_TRUE(backend->SetPower(1, 250000).ok());
  ASSERT_TRUE(backend->SetUtilization(1, 87).ok());

  Result<GpuSample> sample = backend->Sample(1);
  ASSERT_TRUE(sample.ok()) << sample.status().ToString();
  EXPECT_EQ(sample->index, 1);
  EXPECT_EQ(sample->mem_used_bytes, 4 * kSimGiB);
  EXPECT_EQ(sample->energy_mj, 1234u);
  EXPECT_EQ(sample->power_mw, 250000u);
  EXPECT_EQ(sample->utilization_pct, 87);
  ASSERT_EQ(sample->processes.size(), 2u);
  EXPECT_EQ(sample->processes[0].pid, 42);
  EXPECT_TRUE(sample->processes[0].mps_client);

  Result<GpuSample> untouched = backend->Sample(0);
  ASSERT_TRUE(untouched.ok());
  EXPECT_EQ(untouched->mem_used_bytes, 0u);
  EXPECT_TRUE(untouched->processes.empty());
  EXPECT_EQ(untouched->energy_mj, 0u);
  EXPECT_EQ(backend->sample_calls(), 2);
}

TEST(SimulatedBackendTest, EnergyPerSampleAccumulates) {
  std::unique_ptr<SimulatedBackend> backend = Preset("h100x2");
  ASSERT_NE(backend, nullptr);
  ASSERT_TRUE(backend->SetEnergyPerSample(0, 500).ok());
  EXPECT_EQ(backend->Sample(0)->energy_mj, 500u);
  EXPECT_EQ(backend->Sample(0)->energy_mj, 1000u);
}

TEST(SimulatedBackendTest, LostGpuIsUnavailableUntilRestored) {
  std::unique_ptr<SimulatedBackend> backend = Preset("a100x8");
  ASSERT_NE(backend, nullptr);
  ASSERT_TRUE(backend->SetLost(3, true).ok());
  Result<GpuSample> lost = backend->Sample(3);
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.status().code(), Code::kUnavailable);
  EXPECT_THAT(lost.status().message(), HasSubstr("GPU 3"));
  EXPECT_TRUE(backend->Sample(2).ok());
  ASSERT_TRUE(backend->SetLost(3, false).ok());
  EXPECT_TRUE(backend->Sample(3).ok());
  EXPECT_EQ(backend->sample_calls(), 3);  // failed calls count too
}

TEST(SimulatedBackendTest, ScriptingChecksItsArguments) {
  std::unique_ptr<SimulatedBackend> backend = Preset("h100x2");
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->SetPower(2, 1).code(), Code::kNotFound);
  EXPECT_EQ(backend->SetLost(-1, true).code(), Code::kNotFound);
  EXPECT_EQ(backend->SetUtilization(0, 101).code(), Code::kInvalidArgument);
  EXPECT_EQ(backend->SetProcesses(0, {GpuProcess{.pid = 0}}).code(), Code::kInvalidArgument);
  EXPECT_EQ(backend->Sample(2).status().code(), Code::kNotFound);
}

TEST(SimulatedBackendTest, InstancesDoNotShareState) {
  std::unique_ptr<SimulatedBackend> a = Preset("h100x2");
  std::unique_ptr<SimulatedBackend> b = Preset("h100x2");
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->AddEnergy(0, 99).ok());
  ASSERT_TRUE(a->SetLost(1, true).ok());
  EXPECT_EQ(b->Sample(0)->energy_mj, 0u);
  EXPECT_TRUE(b->Sample(1).ok());
  EXPECT_EQ(a->sample_calls(), 0);
  EXPECT_EQ(b->inventory_calls(), 0);
}

TEST(SimulatedConfigTest, BuildsTheDescribedMachine) {
  json config = json::parse(R"({"gpus": [
      {"name": "Big", "mem": "80G", "sm_count": 132, "compute_mode": "exclusive_process"},
      {"mem": 1073741824},
      {"mem": "80GiB", "sm_count": 108,
       "mig": [{"profile": "3g.40gb"}, {"profile": "odd", "mem": "5G", "sm_count": 7}]}]})");
  Result<std::unique_ptr<SimulatedBackend>> backend = SimulatedBackend::FromJson(config);
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  EXPECT_EQ((*backend)->Kind(), "simulated:config");
  std::vector<GpuInfo> gpus = InventoryOf(**backend);
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[0].name, "Big");
  EXPECT_EQ(gpus[0].mem_total_bytes, 80 * kSimGiB);
  EXPECT_EQ(gpus[0].sm_count, 132);
  EXPECT_EQ(gpus[0].compute_mode, ComputeMode::kExclusiveProcess);
  EXPECT_EQ(gpus[1].name, "Simulated GPU");
  EXPECT_EQ(gpus[1].mem_total_bytes, kSimGiB);
  EXPECT_EQ(gpus[1].sm_count, 0);
  ASSERT_TRUE(gpus[2].mig_enabled);
  ASSERT_EQ(gpus[2].migs.size(), 2u);
  EXPECT_EQ(gpus[2].migs[0].mem_total_bytes, 40448 * kSimMiB);  // the A100 profile's default
  EXPECT_EQ(gpus[2].migs[0].sm_count, 42);
  EXPECT_EQ(gpus[2].migs[1].profile, "odd");
  EXPECT_EQ(gpus[2].migs[1].mem_total_bytes, 5 * kSimGiB);
  EXPECT_EQ(gpus[2].migs[1].sm_count, 7);
  EXPECT_EQ(gpus[2].migs[1].gpu_instance_id, 2u);
}

struct BadConfig {
  const char* json_text;
  const char* message_part;
};

TEST(SimulatedConfigTest, RejectsBadConfigsNamingTheField) {
  const BadConfig cases[] = {
      {R"([1, 2])", "top level: expected an object"},
      {R"({})", "gpus: required"},
      {R"({"gpus": []})", "gpus: required"},
      {R"({"gpus": [{"name": "x"}]})", "gpus[0].mem: required"},
      {R"({"gpus": [{"mem": "eighty"}]})", "gpus[0].mem: "},
      {R"({"gpus": [{"mem": -5}]})", "gpus[0].mem: expected a size"},
      {R"({"gpus": [{"mem": 0}]})", "gpus[0].mem: must be more than 0"},
      {R"({"gpus": [{"mem": "8G", "memory": "8G"}]})", "gpus[0]: unknown key 'memory'"},
      {R"({"gpus": [{"mem": "8G", "sm_count": -1}]})", "gpus[0].sm_count"},
      {R"({"gpus": [{"mem": "8G", "compute_mode": "shared"}]})", "gpus[0].compute_mode"},
      {R"({"gpus": [{"mem": "8G", "mig": {}}]})", "gpus[0].mig: expected a list"},
      {R"({"gpus": [{"mem": "80G", "mig": [{"profile": "9g.90gb"}]}]})",
       "gpus[0].mig[0]: profile '9g.90gb' is not a known A100 profile"},
      {R"({"gpus": [{"mem": "80G", "mig": [{"mem": "1G"}]}]})", "gpus[0].mig[0].profile"},
      {R"({"gpus": [{"mem": "40G", "mig": [{"profile": "7g.80gb"}]}]})",
       "gpus[0].mig: the instances' memory exceeds"},
      {R"({"gpus": [{"mem": "80G", "sm_count": 50, "mig": [{"profile": "7g.80gb"}]}]})",
       "gpus[0].mig: the instances' SMs exceed"},
  };
  for (const BadConfig& c : cases) {
    Result<std::unique_ptr<SimulatedBackend>> backend =
        SimulatedBackend::FromJson(json::parse(c.json_text));
    ASSERT_FALSE(backend.ok()) << c.json_text;
    EXPECT_EQ(backend.status().code(), Code::kInvalidArgument) << c.json_text;
    EXPECT_THAT(backend.status().message(), HasSubstr(c.message_part)) << c.json_text;
    EXPECT_THAT(backend.status().message(), StartsWith("simulated config: ")) << c.json_text;
  }
}

TEST(SimulatedConfigTest, FromFileReadsAndReportsThePath) {
  std::string good = ::testing::TempDir() + "/pinpoint_sim_good.json";
  std::string bad = ::testing::TempDir() + "/pinpoint_sim_bad.json";
  std::ofstream(good) << R"({"gpus": [{"mem": "16G"}, {"mem": "16G"}]})";
  std::ofstream(bad) << R"({"gpus": [{"mem": "16G"})";
  Result<std::unique_ptr<SimulatedBackend>> ok = SimulatedBackend::FromFile(good);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(InventoryOf(**ok).size(), 2u);

  Result<std::unique_ptr<SimulatedBackend>> broken = SimulatedBackend::FromFile(bad);
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(broken.status().message(), HasSubstr(bad));

  Result<std::unique_ptr<SimulatedBackend>> missing =
      SimulatedBackend::FromFile(::testing::TempDir() + "/pinpoint_no_such_file.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
}

TEST(MigProfilesTest, KnownAndUnknownProfiles) {
  std::optional<MigInfo> one = A100MigProfile("1g.10gb");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->sm_count, 14);
  EXPECT_EQ(one->mem_total_bytes, 9984 * kSimMiB);
  EXPECT_EQ(A100MigProfile("7g.80gb")->sm_count, 98);
  EXPECT_FALSE(A100MigProfile("1g.5gb").has_value());
  EXPECT_EQ(A100MigProfileNames().size(), 6u);
}

TEST(GpuBackendTest, ComputeModeNames) {
  EXPECT_STREQ(ComputeModeName(ComputeMode::kDefault), "default");
  EXPECT_STREQ(ComputeModeName(ComputeMode::kExclusiveProcess), "exclusive_process");
  EXPECT_STREQ(ComputeModeName(ComputeMode::kExclusiveThread), "exclusive_thread");
  EXPECT_STREQ(ComputeModeName(ComputeMode::kProhibited), "prohibited");
  EXPECT_STREQ(ComputeModeName(ComputeMode::kUnknown), "unknown");
}

}  // namespace
}  // namespace pinpoint::gpu
