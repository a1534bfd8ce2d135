#include "cli/submit_request.h"

#include <gtest/gtest.h>

namespace pinpoint::cli {
namespace {

// Slurm's --gpus=[TYPE:]N (and -G, --gpus-per-node, which are the same on one node): the type
// names a model, any GPU of this node here; --gpus=a100:1 was refused while --gres took it.
TEST(ParseGpuCountTest, ACountOrATypeAndACount) {
  std::string type;
  EXPECT_EQ(*ParseGpuCount("2", &type), 2);
  EXPECT_EQ(type, "");
  EXPECT_EQ(*ParseGpuCount("a100:1", &type), 1);
  EXPECT_EQ(type, "a100");
  for (const char* bad : {"", "a100", ":2", "x:", "2048", "-1", "1.5"})
    EXPECT_FALSE(ParseGpuCount(bad).ok()) << bad;
  EXPECT_EQ(ParseGpuCount("a100").status().message(),
            "--gpus: 'a100' is not a GPU count (N or TYPE:N, N at most 1024)");
}

// Slurm reads a bare --mem as MiB (--mem=1000 was refused for a missing unit).
TEST(ParseHostMemTest, ABareNumberIsMiB) {
  EXPECT_EQ(*ParseHostMem("--mem", "1000"), 1000ull << 20);
  EXPECT_EQ(*ParseHostMem("--mem", "8G"), 8ull << 30);
  EXPECT_EQ(*ParseHostMem("--mem", "32GB"), 32ull << 30);
  EXPECT_FALSE(ParseHostMem("--mem", "lots").ok());
  EXPECT_EQ(ParseHostMem("--mem-per-cpu", "x").status().message().rfind("--mem-per-cpu: ", 0), 0u);
}

SubmitArgs Args() {
  SubmitArgs a;
  a.command = {"true"};
  a.export_env = "NONE";
  return a;
}

// --mem-per-cpu is the job's memory for each of its CPUs, every task's counted (-n 2 -c 3: 6).
TEST(BuildRequestTest, MemPerCpuCountsEveryCpuOfEveryTask) {
  SubmitArgs a = Args();
  a.cpus = 3;
  a.tasks.ntasks = 2;
  a.mem_per_cpu = "128";
  std::vector<std::string> dropped;
  auto r = BuildRequest(a, &dropped);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->cpus, 6);
  EXPECT_EQ(r->mem_bytes, 6 * (128ull << 20));
  a.mem = "1G";
  EXPECT_EQ(BuildRequest(a, &dropped).status().message(),
            "--mem and --mem-per-cpu both given: give one of them");
}

// GPUs in Slurm's spellings; --open-mode takes Slurm's two words alone.
TEST(BuildRequestTest, GpusWithATypeAndOpenMode) {
  SubmitArgs a = Args();
  a.gpus_text = "a100:2";
  std::vector<std::string> dropped;
  auto r = BuildRequest(a, &dropped);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->gpus, 2);
  a.open_mode = "append";
  EXPECT_TRUE(BuildRequest(a, &dropped).ok());
  a.open_mode = "sideways";
  EXPECT_EQ(BuildRequest(a, &dropped).status().message(),
            "--open-mode: 'sideways' is neither append nor truncate");
}

// An error about a value a script's directive gave names the script and its line.
TEST(AtScriptPlaceTest, AnErrorAboutADirectivesValueNamesItsLine) {
  SubmitArgs a = Args();
  a.mem = "lots";
  a.script_places = {{"--mem", "job.sh:4"}, {"-N", "job.sh:5"}, {"--nodes", "job.sh:5"}};
  std::vector<std::string> dropped;
  Status s = AtScriptPlace(a, BuildRequest(a, &dropped).status());
  EXPECT_EQ(s.message().rfind("job.sh:4: --mem: ", 0), 0u) << s.message();
  a.mem = "";
  a.tasks.nodes = "2";
  s = AtScriptPlace(a, BuildRequest(a, &dropped).status());
  EXPECT_EQ(s.message().rfind("job.sh:5: -N/--nodes 2: ", 0), 0u) << s.message();
  a.script_places.clear();
  s = AtScriptPlace(a, BuildRequest(a, &dropped).status());
  EXPECT_EQ(s.message().rfind("-N/--nodes 2: ", 0), 0u) << "typed: no place";
  a.tasks.nodes = "";
  a.mem_per_cpu = "x";
  a.script_places = {{"--mem", "job.sh:4"}};
  s = AtScriptPlace(a, BuildRequest(a, &dropped).status());
  EXPECT_EQ(s.message().rfind("--mem-per-cpu: ", 0), 0u) << "--mem is not --mem-per-cpu";
}

}  // namespace
}  // namespace pinpoint::cli
