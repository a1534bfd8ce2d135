#include "bench/driver/workload.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "common/test_dir.h"

namespace pinpoint::bench {
namespace {

TEST(ParseWorkLineTest, TakesTheLastGoodLine) {
  auto r = ParseWorkLine(
      "env X=1\npp-work units=4 unit=Giter seconds=1.5\nnoise\npp-work units=2.5 unit=epochs "
      "seconds=3\n");
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->units, 2.5);
  EXPECT_EQ(r->unit, "epochs");
  EXPECT_DOUBLE_EQ(r->seconds, 3);
}

TEST(ParseWorkLineTest, IgnoresLinesThatDoNotParse) {
  EXPECT_FALSE(ParseWorkLine("").has_value());
  EXPECT_FALSE(ParseWorkLine("pp-work\n").has_value());
  EXPECT_FALSE(ParseWorkLine("pp-work units=x unit=epochs\n").has_value());
  EXPECT_FALSE(ParseWorkLine("pp-work units=3\n").has_value()) << "no unit";
  EXPECT_FALSE(ParseWorkLine(" pp-work units=3 unit=a\n").has_value()) << "must start the line";
  auto r = ParseWorkLine("pp-work units=3 unit=a\npp-work units=bad unit=b\n");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->unit, "a");
  EXPECT_DOUBLE_EQ(r->seconds, 0);
}

TEST(ParseCudaLineTest, TakesTheFirstLineWithBothTimes) {
  auto r = ParseCudaLine(
      "env X=1\npp-cuda first_us=1700000000250000 ready_us=1700000000500000\n"
      "pp-cuda first_us=1 ready_us=2\npp-work units=4 unit=Giter seconds=1\n");
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->first_s, 1700000000.25);
  EXPECT_DOUBLE_EQ(r->ready_s, 1700000000.5);
}

TEST(ParseCudaLineTest, IgnoresLinesThatDoNotParse) {
  EXPECT_FALSE(ParseCudaLine("").has_value());
  EXPECT_FALSE(ParseCudaLine("pp-cuda first_us=5\n").has_value()) << "no ready_us";
  EXPECT_FALSE(ParseCudaLine("pp-cuda first_us=x ready_us=5\n").has_value());
  EXPECT_FALSE(ParseCudaLine(" pp-cuda first_us=1 ready_us=2\n").has_value())
      << "must start the line";
  auto r =
      ParseCudaLine("pp-cuda first_us=-3 ready_us=2\npp-cuda first_us=3000000 ready_us=4000000\n");
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->first_s, 3);
}

void MakeExecutable(const std::string& path) {
  std::ofstream(path) << "#!/bin/sh\n";
  ::chmod(path.c_str(), 0755);
}

TEST(MakeWorkloadTest, BusyFromTheBinDirWithDefaultsOrGivenArguments) {
  TestDir bin;
  MakeExecutable(bin.path() + "/pp-busy");
  BenchOptions o;
  o.workload = "busy";
  auto w = MakeWorkload(o, bin.path(), "/");
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->argv, (std::vector<std::string>{bin.path() + "/pp-busy", "--blocks", "4", "--iters",
                                               "500000000"}));
  EXPECT_EQ(w->gpu_mem_bytes, 1ull << 30);
  o.workload_args = {"--iters", "7"};
  o.gpu_mem_bytes = 3ull << 30;
  w = MakeWorkload(o, bin.path(), "/");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->argv, (std::vector<std::string>{bin.path() + "/pp-busy", "--iters", "7"}));
  EXPECT_EQ(w->gpu_mem_bytes, 3ull << 30);
}

TEST(MakeWorkloadTest, MissingProgramsAreNamed) {
  TestDir bin;
  BenchOptions o;
  o.workload = "mlp";
  auto w = MakeWorkload(o, bin.path(), "/");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), Code::kNotFound);
  EXPECT_NE(w.status().message().find("pp-mlp"), std::string::npos);
  o.workload = "torch";
  o.torch_script = "no/such/train.py";
  w = MakeWorkload(o, bin.path(), bin.path());
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find(bin.path() + "/no/such/train.py"), std::string::npos);
}

TEST(MakeWorkloadTest, TorchRunsTheScriptWithPythonAndCmdRunsTheCommand) {
  TestDir dir;
  std::ofstream(dir.path() + "/train.py") << "print()\n";
  BenchOptions o;
  o.workload = "torch";
  o.torch_script = "train.py";
  o.workload_args = {"--epochs", "2"};
  auto w = MakeWorkload(o, "/nonexistent", dir.path());
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->argv,
            (std::vector<std::string>{"python3", dir.path() + "/train.py", "--epochs", "2"}));
  EXPECT_EQ(w->gpu_mem_bytes, 4ull << 30);
  o.workload = "cmd";
  o.workload_args = {"sleep", "1"};
  w = MakeWorkload(o, "/nonexistent", dir.path());
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->argv, (std::vector<std::string>{"sleep", "1"}));
}

}  // namespace
}  // namespace pinpoint::bench
