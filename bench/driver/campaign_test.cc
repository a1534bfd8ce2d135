#include "bench/driver/campaign.h"

#include <gtest/gtest.h>

#include <sstream>

namespace pinpoint::bench {
namespace {

// Runs "copies" that take `job_s` each, one after another (serial) or all at once, on a clock
// that only moves when they run. Records what it was asked.
class FakeRunner : public BatchRunner {
 public:
  FakeRunner(Mode mode, double* clock, double job_s, bool serial)
      : mode_(mode), clock_(clock), job_s_(job_s), serial_(serial) {}
  Mode mode() const override { return mode_; }
  Status Setup() override {
    ++setups;
    return setup_error;
  }
  Result<BatchResult> Run(int n, const std::string& tag) override {
    tags.push_back(tag);
    BatchResult b;
    b.t0_s = *clock_;
    for (int i = 0; i < n; ++i) {
      JobResult j;
      j.submit_s = *clock_;
      j.start_s = serial_ ? *clock_ + i * job_s_ : *clock_;
      j.end_s = j.start_s + job_s_;
      j.ok = !fail_jobs;
      j.units = 1;
      j.unit = "steps";
      j.detail = fail_jobs ? "exit code 2: boom" : "";
      b.jobs.push_back(j);
    }
    *clock_ += serial_ ? n * job_s_ : job_s_;
    b.t1_s = *clock_;
    return b;
  }
  void Teardown() override { ++teardowns; }
  void SaveLogs(const std::string&) override {}

  int setups = 0, teardowns = 0;
  Status setup_error;
  bool fail_jobs = false;
  std::vector<std::string> tags;

 private:
  Mode mode_;
  double* clock_;
  double job_s_;
  bool serial_;
};

class FakeMeter : public EnergyMeter {
 public:
  explicit FakeMeter(double* clock) : clock_(clock) {}
  double Mark() override { return *clock_; }
  WindowStats Window(double t0, double t1) override {
    WindowStats w;
    w.seconds = t1 - t0;
    w.energy_j = 100 * w.seconds;
    w.mean_power_w = 100;
    return w;
  }

 private:
  double* clock_;
};

struct Fixture {
  double clock = 1000;
  FakeRunner exclusive{Mode::kExclusive, &clock, 2, true};
  FakeRunner mps{Mode::kMps, &clock, 3, false};
  FakeMeter meter{&clock};
  BenchOptions options;
  std::ostringstream progress;
  std::vector<PointResult> points;
  int written = 0;

  Fixture() {
    options.modes = {Mode::kMps, Mode::kExclusive};
    options.n = {1, 4};
    options.reps = 2;
    options.settle_ms = 0;
  }
  Status Run() {
    CampaignHooks hooks;
    hooks.sleep = [](int) {};
    hooks.now = [this] { return clock; };
    hooks.on_point = [this](const std::vector<PointResult>&) { ++written; };
    return RunCampaign(options, {{Mode::kExclusive, &exclusive}, {Mode::kMps, &mps}}, &meter, "w",
                       hooks, progress, nullptr, &points);
  }
};

TEST(PlanPointsTest, SmallNFirstThenModesInOrderThenRepetitions) {
  BenchOptions o;
  o.modes = {Mode::kMps, Mode::kExclusive, Mode::kBare};
  o.n = {1, 16};
  o.n_for[Mode::kExclusive] = {1, 4};
  o.reps = 2;
  std::vector<PointSpec> plan = PlanPoints(o);
  std::vector<std::string> got;
  for (const PointSpec& p : plan)
    got.push_back(std::string(ModeName(p.mode)) + std::to_string(p.n) + "r" +
                  std::to_string(p.rep));
  EXPECT_EQ(got, (std::vector<std::string>{"mps1r1", "mps1r2", "exclusive1r1", "exclusive1r2",
                                           "bare1r1", "bare1r2", "exclusive4r1", "exclusive4r2",
                                           "mps16r1", "mps16r2"}));
  o.reps_at_1 = 3;
  plan = PlanPoints(o);
  EXPECT_EQ(plan.size(), 13u) << "three repetitions of each N=1 point";
  EXPECT_EQ(plan[2].rep, 3);
  EXPECT_EQ(plan[3].mode, Mode::kExclusive);
}

TEST(EstimateSecondsTest, FromTheLargestSmallerPointOfTheSameMode) {
  PointResult a;
  a.mode = Mode::kExclusive;
  a.n = 2;
  a.batch.t0_s = 0;
  a.batch.t1_s = 4;
  PointResult b = a;
  b.mode = Mode::kMps;
  b.batch.t1_s = 3;
  PointResult skipped = a;
  skipped.n = 4;
  skipped.skipped = true;
  std::vector<PointResult> done = {a, b, skipped};
  EXPECT_DOUBLE_EQ(EstimateSeconds(Mode::kExclusive, 8, done), 16) << "serial modes scale with N";
  EXPECT_DOUBLE_EQ(EstimateSeconds(Mode::kMps, 8, done), 6) << "overlapping modes: half as steep";
  EXPECT_DOUBLE_EQ(EstimateSeconds(Mode::kMps, 2, done), 3);
  EXPECT_LT(EstimateSeconds(Mode::kTimeslice, 8, done), 0) << "nothing measured yet";
  EXPECT_LT(EstimateSeconds(Mode::kExclusive, 1, done), 0) << "only larger points";
}

TEST(RunCampaignTest, SetsUpWarmsUpRunsThePlanAndTearsDown) {
  Fixture f;
  ASSERT_TRUE(f.Run().ok()) << f.progress.str();
  EXPECT_EQ(f.mps.setups, 1);
  EXPECT_EQ(f.exclusive.teardowns, 1);
  EXPECT_EQ(f.mps.teardowns, 1);
  EXPECT_EQ(f.mps.tags.front(), "w-mps-warmup");
  EXPECT_EQ(f.exclusive.tags.back(), "w-exclusive-n4-r2");
  ASSERT_EQ(f.points.size(), 8u);
  EXPECT_EQ(f.written, 8);
  const PointResult& ex4 = f.points.back();
  EXPECT_EQ(ex4.mode, Mode::kExclusive);
  EXPECT_EQ(ex4.n, 4);
  EXPECT_DOUBLE_EQ(ex4.gpu.energy_j, 800) << "the meter's window is the run's";
  EXPECT_DOUBLE_EQ(ComputeMetrics(ex4).makespan_s, 8);
  EXPECT_NE(f.progress.str().find("warm-up mps: one copy in 3.00 s"), std::string::npos)
      << f.progress.str();
  EXPECT_NE(f.progress.str().find("exclusive N=4   rep 2/2: 4/4 ok in 8.00 s"), std::string::npos)
      << f.progress.str();
}

TEST(RunCampaignTest, SkipsPointsThatWouldPassTheBudget) {
  Fixture f;
  f.options.warmup = false;
  f.options.n = {1, 4, 16};
  f.options.reps = 1;
  // mps 1 (3 s), exclusive 1 (2 s), mps 4 (estimate 6 s, ends by 11), exclusive 4 (estimate 8 s:
  // 16 > 15, skipped), mps 16 (estimate 6 s, by 14), exclusive 16 (estimate 32 s, skipped).
  f.options.budget_s = 15;
  ASSERT_TRUE(f.Run().ok());
  std::vector<std::string> got;
  for (const PointResult& p : f.points)
    got.push_back(std::string(ModeName(p.mode)) + std::to_string(p.n) + (p.skipped ? "-" : "+"));
  EXPECT_EQ(got, (std::vector<std::string>{"mps1+", "exclusive1+", "mps4+", "exclusive4-", "mps16+",
                                           "exclusive16-"}));
  EXPECT_NE(f.progress.str().find("skipped"), std::string::npos);
}

TEST(RunCampaignTest, AModeThatCannotBeSetUpIsDroppedAndTheOthersRun) {
  Fixture f;
  f.exclusive.setup_error = Unavailable("pinpointd (exclusive) did not start");
  Status s = f.Run();
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_EQ(s.message(), "setup exclusive: pinpointd (exclusive) did not start");
  ASSERT_EQ(f.points.size(), 8u);
  for (const PointResult& p : f.points) {
    if (p.mode == Mode::kExclusive) {
      EXPECT_EQ(p.error, "setup exclusive: pinpointd (exclusive) did not start");
    } else {
      EXPECT_EQ(p.error, "");
      EXPECT_EQ(p.batch.jobs.size(), static_cast<size_t>(p.n));
    }
  }
  EXPECT_TRUE(f.exclusive.tags.empty()) << "nothing ran in the dropped mode";
  EXPECT_EQ(f.mps.teardowns, 1);
  EXPECT_EQ(f.exclusive.teardowns, 1);
  EXPECT_NE(f.progress.str().find("(mode dropped)"), std::string::npos);
}

TEST(RunCampaignTest, AModeWhoseWarmUpCopyFailsIsDroppedSayingWhy) {
  Fixture f;
  f.mps.fail_jobs = true;
  Status s = f.Run();
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_NE(s.message().find("warm-up copy in mode mps failed: exit code 2: boom"),
            std::string::npos)
      << s.message();
  ASSERT_EQ(f.points.size(), 8u);
  EXPECT_EQ(f.mps.tags.size(), 1u) << "only the warm-up ran in mps";
  EXPECT_EQ(f.points.back().mode, Mode::kExclusive);
  EXPECT_EQ(f.points.back().error, "");
  EXPECT_EQ(f.mps.teardowns, 1);
}

TEST(RunCampaignTest, StopsWhenAskedAndStillTearsDown) {
  Fixture f;
  std::atomic<bool> stop{true};
  CampaignHooks hooks;
  hooks.sleep = [](int) {};
  Status s = RunCampaign(f.options, {{Mode::kExclusive, &f.exclusive}, {Mode::kMps, &f.mps}},
                         &f.meter, "w", hooks, f.progress, &stop, &f.points);
  EXPECT_TRUE(s.ok());
  EXPECT_TRUE(f.points.empty());
  EXPECT_EQ(f.exclusive.teardowns, 1);
  EXPECT_NE(f.progress.str().find("interrupted"), std::string::npos);
}

}  // namespace
}  // namespace pinpoint::bench
