// Real-world Slurm job scripts of GPU work (tests/slurm_scripts, each naming its source) submitted
// unchanged with `pinpoint submit script.sh` to a real pinpointd on a simulated node without Slurm,
// and checked for what they did: each task's index and arguments, the files they wrote, the GPUs
// and CPUs they saw, srun's tasks. The training programs are stand-ins (standins/record) that
// record what they saw in $SLURM_SUBMIT_DIR/seen.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/spawn.h"
#include "integration/harness.h"

namespace pinpoint::testing {
namespace {

namespace fs = std::filesystem;
using Record = std::map<std::string, std::string>;

constexpr int kRunMs = 240000;

struct Shell {
  int exit_code = -1;
  std::string out, err;
};

class SlurmScriptsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    harness_ = new Harness("simulated:a100x8", "\"host_mem\": \"4T\", \"cancel_grace_ms\": 2000");
    harness_->StartDaemon();
  }
  static void TearDownTestSuite() {
    delete harness_;
    harness_ = nullptr;
  }

  // A fresh work directory holding every script, their data and the stand-ins on the PATH.
  void SetUp() override {
    work_ = harness_->dir() + "/work-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::create_directories(work_ + "/bin");
    fs::copy(std::string(PINPOINT_SOURCE_DIR) + "/tests/slurm_scripts", work_,
             fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    for (const char* name : {"python", "python3", "python3.7", "torchrun"})
      fs::create_symlink(work_ + "/standins/record", work_ + "/bin/" + name);
  }

  // Runs `command` with /bin/sh in the work directory, `pinpoint` and the stand-ins on its PATH.
  Shell Run(const std::string& command) const {
    std::string path = work_ + "/bin:" + BinDir() + ":/usr/bin:/bin";
    std::vector<std::string> env = {"PATH=" + path, "PINPOINT_SOCKET=" + harness_->socket(),
                                    "HOME=" + work_, "LANG=C"};
    static int counter = 0;
    std::string out = work_ + "/sh-" + std::to_string(++counter);
    auto pid = Spawn({.argv = {"/bin/sh", "-c", "cd '" + work_ + "' && " + command},
                      .env = env,
                      .out = SpawnStream::File(out + ".out"),
                      .err = SpawnStream::File(out + ".err")});
    Shell r;
    if (!pid.ok()) {
      ADD_FAILURE() << pid.status().ToString();
      return r;
    }
    std::optional<int> status = WaitChild(*pid, kRunMs);
    EXPECT_TRUE(status.has_value()) << command << ": ran past its deadline";
    r.exit_code = status && WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
    r.out = Slurp(out + ".out");
    r.err = Slurp(out + ".err");
    return r;
  }

  // Submits `words` (a script and its arguments, options before it) as a Slurm user would, and
  // returns the job's (or array's) id; "" when refused. `warnings` gets the submit's stderr.
  std::string Submit(const std::string& words, std::string* warnings = nullptr) const {
    Shell s = Run("pinpoint submit --parsable " + words);
    if (warnings != nullptr) *warnings = s.err;
    if (s.exit_code != 0) return "";
    std::string id = s.out.substr(0, s.out.find('\n'));
    EXPECT_FALSE(id.empty()) << s.err;
    return id;
  }

  // Waits for job (or array) `id`: whether all of it completed.
  bool Completed(const std::string& id) const {
    Shell s = Run("pinpoint wait " + id);
    EXPECT_EQ(s.exit_code, 0) << "job " << id << ": " << s.out << s.err
                              << Run("pinpoint show " + id).out;
    return s.exit_code == 0;
  }

  // Every record the stand-ins wrote, oldest run first is not promised.
  std::vector<Record> Records(const std::string& prog = "") const {
    std::vector<Record> out;
    if (!fs::exists(work_ + "/seen")) return out;
    for (const auto& entry : fs::directory_iterator(work_ + "/seen")) {
      std::string name = entry.path().filename();
      if (name.ends_with(".tmp") || (!prog.empty() && name.rfind(prog + ".", 0) != 0)) continue;
      Record r;
      std::istringstream in(Slurp(entry.path()));
      for (std::string line; std::getline(in, line);) {
        size_t eq = line.find('=');
        if (eq != std::string::npos) r[line.substr(0, eq)] = line.substr(eq + 1);
      }
      out.push_back(r);
    }
    return out;
  }

  // No warning names a directive pinpoint honours (only those it has not, such as -p, may warn).
  static void ExpectNoWarningForHonoured(const std::string& warnings) {
    static const std::set<std::string> kHonoured = {"-n",
                                                    "--ntasks",
                                                    "--ntasks-per-node",
                                                    "-N",
                                                    "--nodes",
                                                    "--gpus-per-task",
                                                    "-c",
                                                    "--cpus-per-task",
                                                    "--gres",
                                                    "--gpus",
                                                    "-G",
                                                    "--gpus-per-node",
                                                    "--mem",
                                                    "--mem-per-cpu",
                                                    "-a",
                                                    "--open-mode",
                                                    "-t",
                                                    "--time",
                                                    "--array",
                                                    "-J",
                                                    "--job-name",
                                                    "-o",
                                                    "--output",
                                                    "-e",
                                                    "--error",
                                                    "--requeue"};
    std::istringstream in(warnings);
    for (std::string line; std::getline(in, line);) {
      size_t at = line.find(": directive ");
      if (at == std::string::npos) continue;
      std::string word = line.substr(at + 12);
      word = word.substr(0, word.find_first_of("= "));
      EXPECT_EQ(kHonoured.count(word), 0u) << "a warning for an honoured directive: " << line;
    }
  }

  static Harness* harness_;
  std::string work_;
};

Harness* SlurmScriptsTest::harness_ = nullptr;

int Count(const std::string& list) {
  if (list.empty() || list == "unset") return 0;
  return static_cast<int>(std::count(list.begin(), list.end(), ',')) + 1;
}

TEST_F(SlurmScriptsTest, ArrayTasksEachTrainWithTheirLineOfConfigs) {
  std::string warnings;
  std::string id = Submit("array_sed_configs.sh", &warnings);
  ASSERT_FALSE(id.empty()) << warnings;
  EXPECT_EQ(warnings, "") << "every directive honoured";
  ASSERT_TRUE(Completed(id));
  auto records = Records("python");
  ASSERT_EQ(records.size(), 3u);
  std::set<std::string> args;
  for (auto& r : records) {
    int task = std::stoi(r["SLURM_ARRAY_TASK_ID"]);
    const char* lr[] = {"", "0.1", "0.01", "0.001"};
    ASSERT_TRUE(task >= 1 && task <= 3) << task;
    EXPECT_EQ(r["args"],
              "train.py --lr " + std::string(lr[task]) + " --seed " + std::to_string(task));
    EXPECT_EQ(r["SLURM_ARRAY_JOB_ID"], id);
    EXPECT_EQ(r["SLURM_ARRAY_TASK_COUNT"], "3");
    EXPECT_EQ(r["SLURM_ARRAY_TASK_MIN"], "1");
    EXPECT_EQ(r["SLURM_ARRAY_TASK_MAX"], "3");
    EXPECT_EQ(Count(r["CUDA_VISIBLE_DEVICES"]), 1) << "--gres=gpu:A40:1";
    EXPECT_EQ(r["SLURM_GPUS_ON_NODE"], "1");
    EXPECT_EQ(r["SLURM_MEM_PER_NODE"], "65536");
    EXPECT_EQ(r["SLURM_SUBMIT_DIR"], work_);
    args.insert(r["args"]);
  }
  EXPECT_EQ(args.size(), 3u) << "three different lines";
}

TEST_F(SlurmScriptsTest, ArrayTasksWithFourCpusEach) {
  std::string warnings;
  std::string id = Submit("array_sed_eval.sh", &warnings);
  ASSERT_FALSE(id.empty()) << warnings;
  EXPECT_EQ(warnings, "");
  ASSERT_TRUE(Completed(id));
  auto records = Records("python3");
  ASSERT_EQ(records.size(), 2u);
  for (auto& r : records) {
    EXPECT_EQ(r["args"], "train_eval.py --model esm --fold " +
                             std::to_string(std::stoi(r["SLURM_ARRAY_TASK_ID"]) - 1));
    EXPECT_EQ(r["SLURM_CPUS_PER_TASK"], "4");
    EXPECT_EQ(r["OMP_NUM_THREADS"], "4");
  }
}

TEST_F(SlurmScriptsTest, ArrayTasksRunTheCommandOnTheirLineOfTheFileGiven) {
  fs::create_directories(work_ + "/slurm_output");  // -o's directory, as its repository has it
  std::string warnings;
  std::string id = Submit("array_cmd_file.sh commands.txt", &warnings);
  ASSERT_FALSE(id.empty()) << warnings;
  ExpectNoWarningForHonoured(warnings);
  ASSERT_TRUE(Completed(id));
  auto records = Records("python");
  ASSERT_EQ(records.size(), 2u);
  for (auto& r : records) {
    EXPECT_EQ(r["args"], "train.py --task pushing --seed " + r["SLURM_ARRAY_TASK_ID"]);
    EXPECT_EQ(Count(r["CUDA_VISIBLE_DEVICES"]), 1);
  }
}

TEST_F(SlurmScriptsTest, SrunStartsTheScriptsArgumentsAsOneTask) {
  std::string warnings;
  std::string id = Submit("tf_srun_one_gpu.sh mnist.py --epochs 1", &warnings);
  ASSERT_FALSE(id.empty()) << warnings;
  ExpectNoWarningForHonoured(warnings);
  ASSERT_TRUE(Completed(id));
  auto records = Records("python3.7");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["args"], "mnist.py --epochs 1");
  EXPECT_EQ(records[0]["SLURM_PROCID"], "0");
  EXPECT_NE(records[0]["SLURM_STEP_ID"], "unset") << "a step of srun's";
  EXPECT_EQ(records[0]["SLURM_CPUS_PER_TASK"], "10");
  EXPECT_EQ(Count(records[0]["CUDA_VISIBLE_DEVICES"]), 1);
}

// Horovod's way: srun starts one task per GPU; every task knows its rank and sees the job's GPUs.
void ExpectTasks(const std::vector<Record>& records, int tasks, int gpus_each) {
  ASSERT_EQ(records.size(), static_cast<size_t>(tasks));
  std::set<std::string> ranks, locals, gpus;
  for (auto r : records) {
    ranks.insert(r["SLURM_PROCID"]);
    locals.insert(r["SLURM_LOCALID"]);
    gpus.insert(r["CUDA_VISIBLE_DEVICES"]);
    EXPECT_EQ(r["SLURM_NTASKS"], std::to_string(tasks));
    EXPECT_EQ(Count(r["CUDA_VISIBLE_DEVICES"]), gpus_each);
  }
  std::set<std::string> want;
  for (int i = 0; i < tasks; ++i) want.insert(std::to_string(i));
  EXPECT_EQ(ranks, want);
  EXPECT_EQ(locals, want);
}

TEST_F(SlurmScriptsTest, HorovodFourTasksOnFourGpus) {
  std::string warnings;
  std::string id = Submit("horovod_srun_4_tasks.sh hvd_train.py", &warnings);
  ASSERT_FALSE(id.empty()) << warnings;
  ExpectNoWarningForHonoured(warnings);
  ASSERT_TRUE(Completed(id));
  auto records = Records("python3");
  ExpectTasks(records, 4, 4);
  for (auto& r : records) EXPECT_EQ(r["SLURM_CPUS_PER_TASK"], "10");
  EXPECT_EQ(records[0]["SLURM_CPUS_ON_NODE"], "40") << "-n 4 -c 10";
}

TEST_F(SlurmScriptsTest, HorovodTwoTasksWithAnAccount) {
  std::string warnings;
  std::string id = Submit("horovod_srun_2_tasks.sh hvd_train.py", &warnings);
  ASSERT_FALSE(id.empty()) << warnings;
  ExpectNoWarningForHonoured(warnings);
  EXPECT_EQ(warnings.find("reservation"), std::string::npos) << "not a directive";
  ASSERT_TRUE(Completed(id));
  ExpectTasks(Records("python3.7"), 2, 2);
}

TEST_F(SlurmScriptsTest, OutputNamedAfterTheNode) {
  std::string warnings;
  std::string id = Submit("tf_test_node_output.sh", &warnings);
  ASSERT_FALSE(id.empty()) << warnings;
  ExpectNoWarningForHonoured(warnings);
  ASSERT_TRUE(Completed(id));
  EXPECT_EQ(Records("python").size(), 2u);
  bool found = false;
  for (const auto& entry : fs::directory_iterator(work_))
    found = found || entry.path().filename().string().ends_with("-" + id + ".out");
  EXPECT_TRUE(found) << "%N-%j.out";
}

TEST_F(SlurmScriptsTest, TorchrunOnFourGpusWritesNamedOutputFiles) {
  std::string warnings;
  std::string id = Submit("torchrun_four_gpus.sh", &warnings);
  ASSERT_FALSE(id.empty()) << warnings;
  ExpectNoWarningForHonoured(warnings);
  ASSERT_TRUE(Completed(id));
  auto records = Records("torchrun");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(Count(records[0]["CUDA_VISIBLE_DEVICES"]), 4);
  EXPECT_EQ(records[0]["SLURM_JOB_NAME"], "test");
  EXPECT_NE(Slurp(work_ + "/test_" + id + ".out").find("torchrun ran: --nnodes=1:2"),
            std::string::npos);
  EXPECT_TRUE(fs::exists(work_ + "/test_" + id + ".err"));
}

TEST_F(SlurmScriptsTest, TwoNodesAreRefusedInOneLineAndNothingIsQueued) {
  std::string before = Run("pinpoint queue --all -h").out;
  Shell s = Run("pinpoint submit ddp_two_nodes.sh");
  EXPECT_NE(s.exit_code, 0);
  EXPECT_NE(s.err.find("-N/--nodes 2: a pinpoint job runs on one node"), std::string::npos)
      << s.err;
  EXPECT_NE(s.err.find("pinpoint: ddp_two_nodes.sh:6: -N/--nodes 2"), std::string::npos)
      << "the directive's line: " << s.err;
  // The refusal is one line; the others warn about -p and --no-requeue, which it has not.
  std::istringstream lines(s.err);
  int errors = 0;
  for (std::string line; std::getline(lines, line);)
    errors += line.find(": directive ") == std::string::npos;
  EXPECT_EQ(errors, 1) << s.err;
  EXPECT_EQ(Run("pinpoint queue --all -h").out, before);
}

TEST_F(SlurmScriptsTest, MasterAddrFromScontrolAndTwoGpusBySrun) {
  std::string warnings;
  std::string id = Submit("ddp_scontrol_master.sh", &warnings);
  ASSERT_FALSE(id.empty()) << warnings;
  ExpectNoWarningForHonoured(warnings);
  ASSERT_TRUE(Completed(id));
  auto records = Records("python3");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["MASTER_ADDR"], records[0]["SLURMD_NODENAME"]);
  EXPECT_NE(records[0]["MASTER_ADDR"], "");
  EXPECT_EQ(Count(records[0]["CUDA_VISIBLE_DEVICES"]), 2);
  EXPECT_EQ(records[0]["SLURM_JOB_NAME"], "mgpu4");
}

TEST_F(SlurmScriptsTest, CdToTheSubmitDirectoryFromElsewhere) {
  fs::create_directories(work_ + "/elsewhere");
  std::string warnings;
  std::string id = Submit("-D elsewhere submit_dir_cd.sh", &warnings);
  ASSERT_FALSE(id.empty()) << warnings;
  ExpectNoWarningForHonoured(warnings);
  ASSERT_TRUE(Completed(id));
  auto records = Records("python3");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["pwd"], work_) << "cd $SLURM_SUBMIT_DIR: where submit ran, not -D";
  EXPECT_EQ(records[0]["SLURM_JOB_NAME"], "train_whole");
}

TEST_F(SlurmScriptsTest, EightTasksAskedForAndTheProgramStartedOnce) {
  std::string warnings;
  std::string id = Submit("ntasks_no_srun.sh", &warnings);
  ASSERT_FALSE(id.empty()) << warnings;
  ExpectNoWarningForHonoured(warnings);
  ASSERT_TRUE(Completed(id));
  auto records = Records("python");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["SLURM_NTASKS"], "8");
  EXPECT_EQ(records[0]["SLURM_CPUS_ON_NODE"], "8");
  EXPECT_EQ(records[0]["OMP_NUM_THREADS"], "1") << "the script's own";
}

TEST_F(SlurmScriptsTest, StdoutAndStderrInJobIdFiles) {
  std::string warnings;
  std::string id = Submit("job_id_out_err.sh", &warnings);
  ASSERT_FALSE(id.empty()) << warnings;
  ExpectNoWarningForHonoured(warnings);
  ASSERT_TRUE(Completed(id));
  EXPECT_EQ(Slurp(work_ + "/" + id + ".out"), "python ran: train.py\n");
  EXPECT_EQ(Slurp(work_ + "/" + id + ".err"), "to stderr\n");
  auto records = Records("python");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["SLURM_CPUS_PER_TASK"], "7");
}

TEST_F(SlurmScriptsTest, SrunOnFourGpusWithMemoryPerCpu) {
  std::string warnings;
  std::string id = Submit("srun_four_gpus_mem_per_cpu.sh", &warnings);
  ExpectNoWarningForHonoured(warnings);
  ASSERT_FALSE(id.empty()) << warnings;
  ASSERT_TRUE(Completed(id));
  auto records = Records("python3");
  ExpectTasks(records, 1, 4);
  EXPECT_EQ(records[0]["SLURM_MEM_PER_NODE"], "128");
}

TEST_F(SlurmScriptsTest, OneGpuPerNode) {
  std::string warnings;
  std::string id = Submit("gpus_per_node.sh", &warnings);
  ASSERT_FALSE(id.empty()) << warnings;
  ExpectNoWarningForHonoured(warnings);
  ASSERT_TRUE(Completed(id));
  auto records = Records("python");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(Count(records[0]["CUDA_VISIBLE_DEVICES"]), 1);
  EXPECT_EQ(records[0]["SLURM_NTASKS"], "4");
}

// A pipeline: preprocessing, then an array of trainings once it completed, then a summary once
// every training completed (--dependency=afterok on the array's id).
TEST_F(SlurmScriptsTest, APipelineOfDependencies) {
  std::string warnings;
  std::string pre = Submit("preprocess_then_train.sh", &warnings);
  ASSERT_FALSE(pre.empty()) << warnings;
  EXPECT_EQ(warnings, "");
  // jets passes its own options after the script too ($SLURMARGS): issue 58 items 3-6's; none here.
  std::string array = Submit("--dependency=afterok:" + pre + " --array=1-2 array_train.s");
  ASSERT_FALSE(array.empty());
  std::string summary = Submit("--dependency=afterok:" + array + " summarize_training.s " + array);
  ASSERT_FALSE(summary.empty());
  ASSERT_TRUE(Completed(summary));
  EXPECT_EQ(Slurp(work_ + "/job.out"),
            "python ran: preprocess.py ./config/preprocess.yaml\nfinished\n");
  for (auto& r : Records("python")) {
    if (r["args"].starts_with("train.py")) {
      EXPECT_EQ(r["args"], "train.py --seed " + r["SLURM_ARRAY_TASK_ID"]);
      EXPECT_GE(std::stoi(r["records_before"]), 1) << "after the preprocessing";
      EXPECT_TRUE(fs::exists(work_ + "/train_" + array + "_" + r["SLURM_ARRAY_TASK_ID"] + ".out"));
    } else if (r["args"].starts_with("summarize.py")) {
      EXPECT_EQ(r["args"], "summarize.py " + array);
      EXPECT_EQ(r["records_before"], "3") << "after the preprocessing and both trainings";
    }
  }
  EXPECT_EQ(Records("python").size(), 4u);
}

TEST_F(SlurmScriptsTest, EachSrunTaskSeesItsOwnGpu) {
  fs::create_directories(work_ + "/sout");  // the original's own output directory
  std::string warnings;
  std::string id = Submit("gpus_per_task_srun.sh", &warnings);
  ASSERT_FALSE(id.empty()) << warnings;
  ExpectNoWarningForHonoured(warnings);
  ASSERT_TRUE(Completed(id));
  auto records = Records("python");
  ExpectTasks(records, 4, 1);
  std::set<std::string> gpus;
  for (auto& r : records) gpus.insert(r["CUDA_VISIBLE_DEVICES"]);
  EXPECT_EQ(gpus.size(), 4u) << "four different GPUs";
  EXPECT_EQ(Slurp(work_ + "/sout/" + id + ".out").rfind("hello\n", 0), 0u);
}

TEST_F(SlurmScriptsTest, ArrayTasksSrunTheirLineOfTheFile) {
  fs::create_directories(work_ + "/slurm_log");
  std::string warnings;
  std::string id = Submit("array_srun_line.sh", &warnings);
  ASSERT_FALSE(id.empty()) << warnings;
  ExpectNoWarningForHonoured(warnings);
  ASSERT_TRUE(Completed(id));
  auto records = Records("python");
  ASSERT_EQ(records.size(), 2u);
  for (auto& r : records) {
    EXPECT_EQ(r["args"], "train.py --epochs " + r["SLURM_ARRAY_TASK_ID"]);
    EXPECT_EQ(r["SLURM_PROCID"], "0");
    EXPECT_EQ(r["SLURM_CPUS_PER_TASK"], "4");
  }
}

TEST_F(SlurmScriptsTest, ArrayIndexAsAFlagWithoutAGpu) {
  std::string warnings;
  std::string id = Submit("array_index_flag.sh", &warnings);
  ASSERT_FALSE(id.empty()) << warnings;
  EXPECT_EQ(warnings, "");
  ASSERT_TRUE(Completed(id));
  auto records = Records("python");
  ASSERT_EQ(records.size(), 3u);
  std::set<std::string> seen;
  for (auto& r : records) {
    EXPECT_EQ(r["args"],
              "train_test.py --config ./configs/example.yaml --index " + r["SLURM_ARRAY_TASK_ID"]);
    EXPECT_EQ(r["CUDA_VISIBLE_DEVICES"], "") << "no GPU asked for: none seen";
    seen.insert(r["SLURM_ARRAY_TASK_ID"]);
  }
  EXPECT_EQ(seen, (std::set<std::string>{"0", "1", "2"}));
}

}  // namespace
}  // namespace pinpoint::testing
