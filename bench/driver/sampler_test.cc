#include "bench/driver/sampler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "gpu/simulated_backend.h"

namespace pinpoint::bench {
namespace {

GpuReading R(double t, uint64_t energy_mj, uint32_t power_mw, int util = -1, uint64_t mem = 0) {
  GpuReading r;
  r.t_s = t;
  r.energy_mj = energy_mj;
  r.power_mw = power_mw;
  r.utilization_pct = util;
  r.mem_used_bytes = mem;
  return r;
}

TEST(SummarizeWindowTest, EnergyFromTheCounterBetweenTheMarks) {
  std::vector<GpuReading> rs = {R(9, 1000, 100000), R(10, 5000, 100000, 20, 1),
                                R(11, 205000, 200000, 60, 9), R(12, 405000, 200000, 100, 4),
                                R(13, 505000, 100000)};
  WindowStats w = SummarizeWindow(rs, 10, 12);
  EXPECT_DOUBLE_EQ(w.seconds, 2);
  EXPECT_DOUBLE_EQ(w.energy_j, 400);
  EXPECT_EQ(w.energy_source, "counter");
  EXPECT_DOUBLE_EQ(w.mean_power_w, 200);
  EXPECT_DOUBLE_EQ(w.utilization_pct, 60);
  EXPECT_EQ(w.peak_mem_bytes, 9u);
  EXPECT_EQ(w.samples, 3);
}

TEST(SummarizeWindowTest, IntegratesPowerWhenThereIsNoCounter) {
  std::vector<GpuReading> rs = {R(10, 0, 100000), R(11, 0, 300000), R(12, 0, 300000)};
  WindowStats w = SummarizeWindow(rs, 10, 12);
  EXPECT_EQ(w.energy_source, "power");
  EXPECT_DOUBLE_EQ(w.energy_j, 200 + 300);
  EXPECT_DOUBLE_EQ(w.mean_power_w, 250);
  EXPECT_LT(w.utilization_pct, 0) << "unsupported stays unknown";
}

TEST(SummarizeWindowTest, ACounterThatWentBackwardsIsNotUsed) {
  std::vector<GpuReading> rs = {R(10, 9000, 100000), R(12, 1000, 100000)};
  WindowStats w = SummarizeWindow(rs, 10, 12);
  EXPECT_EQ(w.energy_source, "power");
  EXPECT_DOUBLE_EQ(w.energy_j, 200);
}

TEST(SummarizeWindowTest, MarksTakenInTheSameInstantMakeAnEmptyWindow) {
  std::vector<GpuReading> rs = {R(10, 1000, 100000), R(10, 1250, 100000)};
  WindowStats w = SummarizeWindow(rs, 10, 10);
  EXPECT_EQ(w.energy_source, "counter");
  EXPECT_DOUBLE_EQ(w.energy_j, 0);
}

TEST(SummarizeWindowTest, NothingToGoOn) {
  WindowStats w = SummarizeWindow({}, 10, 12);
  EXPECT_LT(w.energy_j, 0);
  EXPECT_LT(w.mean_power_w, 0);
  EXPECT_EQ(w.energy_source, "");
  EXPECT_EQ(w.samples, 0);
}

// Starts `sampler`, takes two marks and stops it; the window between them. The sampler's first
// reading failing shows as a window of no samples (the tests' expectations then fail).
WindowStats BetweenTwoMarks(GpuSampler& sampler) {
  if (!sampler.Start().ok()) return WindowStats{};
  double t0 = sampler.Mark();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // two distinct instants, not a timing
  double t1 = sampler.Mark();
  WindowStats w = sampler.Window(t0, t1);
  sampler.Stop();
  return w;
}

TEST(GpuSamplerTest, MarksBracketAWindowOfTheBackendsReadings) {
  auto backend = gpu::SimulatedBackend::FromPreset("h100x2");
  ASSERT_TRUE(backend.ok());
  ASSERT_TRUE((*backend)->SetEnergyPerSample(1, 250).ok());
  ASSERT_TRUE((*backend)->SetUtilization(1, 40).ok());
  GpuSampler sampler(backend->get(), {1}, 10);
  WindowStats w = BetweenTwoMarks(sampler);
  EXPECT_EQ(w.energy_source, "counter");
  // Each reading adds 250 mJ; the window holds at least the second mark's.
  EXPECT_GE(w.energy_j, 0.25);
  EXPECT_DOUBLE_EQ(w.utilization_pct, 40);
  EXPECT_GE(sampler.Readings().size(), 3u);
  EXPECT_EQ(sampler.LastError(), "");
}

TEST(GpuSamplerTest, StartFailsForAGpuTheBackendDoesNotHave) {
  auto backend = gpu::SimulatedBackend::FromPreset("h100x2");
  ASSERT_TRUE(backend.ok());
  GpuSampler sampler(backend->get(), {0, 7}, 10);
  Status s = sampler.Start();
  EXPECT_EQ(s.code(), Code::kNotFound) << "one GPU of the list it cannot read is enough";
}

TEST(CombineSamplesTest, SumsWhatEveryGpuGivesAndAveragesUtilisation) {
  gpu::GpuSample a, b;
  a.energy_mj = 1000;
  a.power_mw = 300000;
  a.utilization_pct = 90;
  a.mem_used_bytes = 4ull << 30;
  b.energy_mj = 500;
  b.power_mw = 100000;
  b.utilization_pct = 30;
  b.mem_used_bytes = 1ull << 30;
  GpuReading r = CombineSamples({a, b});
  EXPECT_EQ(r.energy_mj, 1500u);
  EXPECT_EQ(r.power_mw, 400000u);
  EXPECT_EQ(r.utilization_pct, 60);
  EXPECT_EQ(r.mem_used_bytes, 5ull << 30);
}

TEST(CombineSamplesTest, WhatOneGpuCannotGiveIsUnknownForAll) {
  gpu::GpuSample a, b;
  a.energy_mj = 1000;
  a.power_mw = 300000;
  a.utilization_pct = 90;
  GpuReading r = CombineSamples({a, b});  // b: no counter, no power, no utilisation
  EXPECT_EQ(r.energy_mj, 0u) << "a sum without b's energy would read as the two GPUs' energy";
  EXPECT_EQ(r.power_mw, 0u);
  EXPECT_EQ(r.utilization_pct, -1);
}

TEST(GpuSamplerTest, TwoGpusAreReadAsOne) {
  auto backend = gpu::SimulatedBackend::FromPreset("h100x2");
  ASSERT_TRUE(backend.ok());
  ASSERT_TRUE((*backend)->SetEnergyPerSample(0, 100).ok());
  ASSERT_TRUE((*backend)->SetEnergyPerSample(1, 250).ok());
  ASSERT_TRUE((*backend)->SetUtilization(0, 20).ok());
  ASSERT_TRUE((*backend)->SetUtilization(1, 40).ok());
  GpuSampler sampler(backend->get(), {0, 1}, 10);
  WindowStats w = BetweenTwoMarks(sampler);
  EXPECT_EQ(w.energy_source, "counter");
  EXPECT_GE(w.energy_j, 0.35) << "each reading adds 100 + 250 mJ";
  EXPECT_DOUBLE_EQ(w.utilization_pct, 30);
}

}  // namespace
}  // namespace pinpoint::bench
