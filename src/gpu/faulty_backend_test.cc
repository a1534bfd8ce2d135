#include "gpu/faulty_backend.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpu/simulated_backend.h"

namespace pinpoint::gpu {
namespace {

using ::testing::HasSubstr;
using Op = FaultyGpuBackend::Op;

class FaultyGpuBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<SimulatedBackend>> sim = SimulatedBackend::FromPreset("h100x2");
    ASSERT_TRUE(sim.ok());
    sim_ = sim->get();
    faulty_ = std::make_unique<FaultyGpuBackend>(std::move(sim).value());
  }

  SimulatedBackend* sim_ = nullptr;  // owned by faulty_
  std::unique_ptr<FaultyGpuBackend> faulty_;
};

TEST_F(FaultyGpuBackendTest, PassesCallsThroughWithoutFaults) {
  EXPECT_EQ(faulty_->Kind(), "simulated:h100x2");
  EXPECT_EQ(faulty_->DriverVersion(), "simulated");
  EXPECT_EQ(faulty_->target(), sim_);
  ASSERT_TRUE(sim_->AddEnergy(1, 77).ok());
  Result<GpuSample> sample = faulty_->Sample(1);
  ASSERT_TRUE(sample.ok());
  EXPECT_EQ(sample->energy_mj, 77u);
  ASSERT_TRUE(faulty_->Inventory().ok());
  EXPECT_EQ(sim_->sample_calls(), 1);
  EXPECT_EQ(faulty_->calls(Op::kSample), 1);
  EXPECT_EQ(faulty_->calls(Op::kInventory), 1);
  EXPECT_EQ(faulty_->injected_faults(Op::kSample), 0);
}

TEST_F(FaultyGpuBackendTest, DeviceLostFailsOnlyThatGpu) {
  faulty_->SetDeviceLost(1, true);
  Result<GpuSample> lost = faulty_->Sample(1);
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.status().code(), Code::kUnavailable);
  EXPECT_THAT(lost.status().message(), HasSubstr("GPU 1: device lost"));
  EXPECT_TRUE(faulty_->Sample(0).ok());
  EXPECT_EQ(sim_->sample_calls(), 1);  // the injected failure never reached the target
  faulty_->SetDeviceLost(1, false);
  EXPECT_TRUE(faulty_->Sample(1).ok());
  EXPECT_EQ(faulty_->injected_faults(Op::kSample), 1);
}

TEST_F(FaultyGpuBackendTest, InventoryFailure) {
  faulty_->SetInventoryFailure(true);
  Result<std::vector<GpuInfo>> gpus = faulty_->Inventory();
  ASSERT_FALSE(gpus.ok());
  EXPECT_EQ(gpus.status().code(), Code::kUnavailable);
  EXPECT_EQ(sim_->inventory_calls(), 0);
  EXPECT_TRUE(faulty_->Sample(0).ok());
  faulty_->SetInventoryFailure(false);
  EXPECT_TRUE(faulty_->Inventory().ok());
}

TEST_F(FaultyGpuBackendTest, CountdownFailsTheNthCallThenRecovers) {
  faulty_->InjectAfter(Op::kSample, 2, IoError("nvml timed out"), 2);
  EXPECT_TRUE(faulty_->Sample(0).ok());
  EXPECT_TRUE(faulty_->Sample(1).ok());
  EXPECT_EQ(faulty_->Sample(0).status().code(), Code::kIo);
  EXPECT_EQ(faulty_->Sample(0).status().message(), "nvml timed out");
  EXPECT_TRUE(faulty_->Sample(0).ok());
  EXPECT_TRUE(faulty_->Inventory().ok());  // other ops are unaffected
  EXPECT_EQ(faulty_->injected_faults(Op::kSample), 2);
  EXPECT_EQ(faulty_->calls(Op::kSample), 5);
}

TEST_F(FaultyGpuBackendTest, CountdownForever) {
  faulty_->InjectAfter(Op::kInventory, 0, Unavailable("driver gone"), -1);
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(faulty_->Inventory().ok());
  faulty_->ClearFaults();
  EXPECT_TRUE(faulty_->Inventory().ok());
  EXPECT_EQ(faulty_->injected_faults(Op::kInventory), 5);
}

TEST_F(FaultyGpuBackendTest, HookSeesEveryCallAndMayChangeFaults) {
  std::vector<std::pair<Op, int>> seen;
  faulty_->SetCallHook([&](Op op, int index) {
    seen.emplace_back(op, index);
    if (op == Op::kSample && index == 0) faulty_->SetDeviceLost(0, true);  // no deadlock
  });
  EXPECT_FALSE(faulty_->Sample(0).ok());
  ASSERT_TRUE(faulty_->Inventory().ok());
  EXPECT_EQ(seen, (std::vector<std::pair<Op, int>>{{Op::kSample, 0}, {Op::kInventory, -1}}));
}

TEST_F(FaultyGpuBackendTest, TargetFaultsStillShowThrough) {
  ASSERT_TRUE(sim_->SetLost(0, true).ok());
  Result<GpuSample> sample = faulty_->Sample(0);
  ASSERT_FALSE(sample.ok());
  EXPECT_THAT(sample.status().message(), HasSubstr("simulated"));
  EXPECT_EQ(faulty_->injected_faults(Op::kSample), 0);
}

}  // namespace
}  // namespace pinpoint::gpu
