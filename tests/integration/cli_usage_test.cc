// Mistakes on pinpoint's command line, as a new user makes them, against a real daemon on a
// simulated node: one line naming the mistake (and the nearest known word), exit 2, no job stored.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "integration/harness.h"

namespace pinpoint::testing {
namespace {

using nlohmann::json;

class CliUsageTest : public ::testing::Test {
 protected:
  void SetUp() override { h_.StartDaemon(); }
  size_t JobsStored() { return json::parse(h_.Cli({"--json", "queue", "--all"}).out).size(); }
  Harness h_;
};

TEST_F(CliUsageTest, UnknownOptionIsNamedWithTheNearestOneAndTheJobsCommandIsNotRead) {
  auto r = h_.Cli({"submit", "--gpu-memory", "4G", "--", "python", "train.py", "--lr", "0.1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "pinpoint submit: unknown option --gpu-memory (did you mean --gpu-mem?)\n");
  r = h_.Cli({"queue", "--al"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "pinpoint queue: unknown option --al (did you mean --all?)\n");
  r = h_.Cli({"logs", "--stdrr", "1"});
  EXPECT_EQ(r.err, "pinpoint logs: unknown option --stdrr (did you mean --stderr?)\n");
  r = h_.Cli({"--jsno", "queue"});
  EXPECT_EQ(r.err, "pinpoint: unknown option --jsno (did you mean --json?)\n");
  EXPECT_EQ(JobsStored(), 0u);
}

// Close in letters, far in meaning: no "did you mean" that points the wrong way.
TEST_F(CliUsageTest, NoSuggestionNamesTheOppositeOrAnotherResource) {
  auto r = h_.Cli({"submit", "--no-requeue", "--", "true"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.find("did you mean"), std::string::npos) << r.err;
  // Slurm's --gpus-per-socket (not pinpoint's; --gpus-per-task is since issue 58): a GPU option.
  r = h_.Cli({"submit", "--gpus-per-socket", "1", "--", "true"});
  EXPECT_EQ(r.err.find("--cpus-per-task"), std::string::npos) << r.err;
  r = h_.Cli({"requeue", "1"});
  EXPECT_EQ(r.err.find("did you mean queue"), std::string::npos) << r.err;
  EXPECT_EQ(JobsStored(), 0u);
}

// Slurm's short options mean what they mean in squeue and scancel: -n a name, -h no header.
TEST_F(CliUsageTest, SlurmShortOptionsMeanWhatSqueueAndScancelMean) {
  ASSERT_EQ(h_.Cli({"submit", "--hold", "-J", "sweep", "--", "true"}).exit_code, 0);
  ASSERT_EQ(h_.Cli({"submit", "--hold", "-J", "other", "--", "true"}).exit_code, 0);
  auto r = h_.Cli({"queue", "-n", "sweep", "-h"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("sweep"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("other"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("ID"), std::string::npos) << "no header: " << r.out;
  r = h_.Cli({"cancel", "-n", "sweep"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cancelled job 1"), std::string::npos) << r.out;
  EXPECT_EQ(h_.Cli({"queue", "--help"}).exit_code, 0);
}

// A Slurm user's script, unchanged: its #SBATCH lines are read, #PINPOINT ones win over them, the
// command line over both, and a directive pinpoint has not is one warning line.
TEST_F(CliUsageTest, AScriptsSbatchLinesAreReadAndTheCommandLineWins) {
  std::string script = h_.dir() + "/job.sh";
  std::ofstream(script) << "#!/bin/sh\n"
                           "#SBATCH -J scripted --time=00:10:00\n"
                           "#SBATCH -c 2 --partition=gpu\n"
                           "#SBATCH --gres=gpu:1\n"
                           "#PINPOINT --priority 5\n"
                           "echo ran\n";
  ::chmod(script.c_str(), 0755);
  auto r = h_.Cli({"--json", "submit", "--hold", "-c", "1", script});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err,
            "pinpoint: " + script +
                ":3: directive --partition=gpu is not an option of pinpoint submit; ignored\n");
  json job = json::parse(r.out);
  EXPECT_EQ(job["request"]["name"], "scripted");
  EXPECT_EQ(job["request"]["time_limit_s"], 600);
  EXPECT_EQ(job["request"]["cpus"], 1) << "the command line wins";
  EXPECT_EQ(job["request"]["gpus"], 1) << "--gres=gpu:1";
  EXPECT_EQ(job["request"]["priority"], 5);
  EXPECT_EQ(job["request"]["argv"], json({script}));
}

// A job that can never start is refused at submit with one line, and nothing is stored: it used
// to be accepted, fail at launch and leave the queue.
TEST_F(CliUsageTest, AJobThatCannotStartIsRefusedAtSubmit) {
  auto r = h_.Cli({"submit", "--", "pyhton-no-such", "train.py"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("pinpoint: cannot run 'pyhton-no-such': not found on the job's PATH (", 0),
            0u)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  r = h_.Cli({"submit", "--", "./no-such-script.sh"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cannot run './no-such-script.sh': no such file"), std::string::npos)
      << r.err;
  r = h_.Cli({"submit", "-o", h_.dir() + "/no/such/dir/out.log", "--", "true"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("-o: the directory " + h_.dir() + "/no/such/dir cannot be written by you"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(JobsStored(), 0u);
  EXPECT_EQ(h_.Cli({"submit", "--wait", "--", "true"}).exit_code, 0)
      << "a command on the PATH runs";
}

// Every mistake is one line in the user's words: not the option parser's own texts, not the API's
// field names.
TEST_F(CliUsageTest, TheParsersOwnWordsDoNotReachUsers) {
  std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"top", "-i", "0"},
       "pinpoint top: --interval: 0 is out of range (0.1 to 3600) (see pinpoint top --help)\n"},
      {{"queue", "--limit", "99999"},
       "pinpoint queue: --limit: 99999 is out of range (0 to 10000) (see pinpoint queue --help)\n"},
      {{"show"}, "pinpoint show: missing a job id (see pinpoint show --help)\n"},
      {{"show", "1", "2"}, "pinpoint show: unexpected argument '2' (see pinpoint show --help)\n"},
      {{"update", "--nice", "5", "1"},
       "pinpoint update: unknown option --nice (see pinpoint update --help)\n"},
      {{"submit", "-e", "%b.err", "--", "true"},
       "pinpoint: -e (error_path): '%b' is not a placeholder (%j or %J job id, %u user, %x job "
       "name, %A array id, "
       "%a array task index, %N node name, %% a percent sign)\n"},
      {{"submit", "--gpus", "0", "--gpu-mem", "4G", "--", "true"},
       "pinpoint: --gpu-mem needs --gpus of at least 1\n"},
  };
  for (const auto& [args, want] : cases) {
    auto r = h_.Cli(args);
    EXPECT_EQ(r.exit_code, 2) << args.front();
    EXPECT_EQ(r.err, want) << args.front();
  }
}

// sbatch --parsable: the id alone, as pipeline scripts read it (jid=$(sbatch --parsable ...)).
TEST_F(CliUsageTest, ParsablePrintsTheIdAlone) {
  auto r = h_.Cli({"submit", "--parsable", "--hold", "--", "true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
  r = h_.Cli({"submit", "--parsable", "--hold", "--array", "1-3", "--", "true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "2\n") << "the array's id";
  r = h_.Cli({"submit", "--parsable", "--wait", "--", "sh", "-c", "exit 3"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.out, "5\n") << "with --wait: the id, and the exit code says how it ended";
}

TEST_F(CliUsageTest, UnknownCommandIsNamedWithTheNearestOne) {
  auto r = h_.Cli({"queu"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "pinpoint: unknown command 'queu' (did you mean queue?)\n");
  r = h_.Cli({"--json", "canel", "1"});
  EXPECT_EQ(r.err, "pinpoint: unknown command 'canel' (did you mean cancel?)\n");
}

TEST_F(CliUsageTest, GlobalOptionsAreAcceptedAnywhereBeforeDashDash) {
  auto q = h_.Cli({"queue", "--json"});
  ASSERT_EQ(q.exit_code, 0) << q.err;
  EXPECT_TRUE(json::parse(q.out).is_array()) << q.out;
  auto s = h_.Cli({"submit", "--json", "--wait", "--", "echo", "--json", "--socket"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  json job = json::parse(s.out);
  EXPECT_EQ(job["request"]["argv"], json({"echo", "--json", "--socket"})) << "after --: the job's";
  EXPECT_EQ(h_.Cli({"logs", "1"}).out, "--json --socket\n");
  auto elsewhere = h_.Cli({"gpus", "--socket", h_.dir() + "/no-such.sock"});
  EXPECT_EQ(elsewhere.exit_code, 3)
      << "--socket after the subcommand is the one used: " << elsewhere.err;
  EXPECT_NE(elsewhere.err.find("no-such.sock"), std::string::npos) << elsewhere.err;
}

// A device memory size without a unit is refused; a host one is MiB, as Slurm reads --mem.
TEST_F(CliUsageTest, ASizeWithoutAUnitIsRefusedButMemIsMiB) {
  auto r = h_.Cli({"submit", "--gpu-mem", "4", "--", "true"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "pinpoint: --gpu-mem: invalid size '4': give a unit, e.g. 4M or 4G\n");
  EXPECT_EQ(JobsStored(), 0u);
  r = h_.Cli({"--json", "submit", "--mem", "4000", "--", "true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["request"]["mem_bytes"], 4000ull << 20);
}

TEST_F(CliUsageTest, OneWordingForABadOrMissingJobInEverySubcommand) {
  for (const char* sub : {"show", "cancel", "wait", "logs"}) {
    for (const char* id : {"0", "-1", "abc"}) {
      auto r = h_.Cli({sub, id});
      EXPECT_EQ(r.exit_code, 2) << sub << " " << id;
      EXPECT_EQ(r.err, "pinpoint " + std::string(sub) + ": '" + id +
                           "' is not a job id (job ids are whole numbers from 1)\n");
    }
    auto missing = h_.Cli({sub, "999"});
    EXPECT_EQ(missing.exit_code, 4) << sub;
    EXPECT_EQ(missing.err, "pinpoint: no job 999\n") << sub;
  }
}

TEST_F(CliUsageTest, HelpCoversEverySubcommandAndTheCompanions) {
  auto help = h_.Cli({"--help"});
  ASSERT_EQ(help.exit_code, 0);
  for (const char* sub : {"submit", "queue", "show", "cancel", "gpus", "wait", "logs", "report",
                          "top", "version", "bench", "slurm", "htcondor"}) {
    EXPECT_NE(help.out.find("\n  " + std::string(sub) + " "), std::string::npos)
        << sub << " missing:\n"
        << help.out;
  }
  for (const char* companion : {"slurm", "htcondor"}) {
    for (std::vector<std::string> args :
         {std::vector<std::string>{companion, "--help"}, {companion, "conf", "--help"}}) {
      auto r = h_.Cli(args);
      EXPECT_EQ(r.exit_code, 0) << companion << ": " << r.err;
      EXPECT_NE(r.out.find("pinpoint " + std::string(companion) + " conf"), std::string::npos)
          << r.out;
      EXPECT_EQ(r.err, "");
    }
  }
  auto sub = h_.Cli({"queue", "--help"});
  EXPECT_EQ(sub.exit_code, 0);
  EXPECT_NE(sub.out.find("--limit"), std::string::npos) << sub.out;
}

TEST_F(CliUsageTest, CliMdTablesEverySubcommandOfTheHelp) {
  auto help = h_.Cli({"--help"});
  ASSERT_EQ(help.exit_code, 0);
  std::ifstream in(std::string(PINPOINT_SOURCE_DIR) + "/docs/cli.md");
  std::string table, line;
  while (std::getline(in, line)) {
    if (line.rfind("| [`", 0) == 0) table += line + "\n";
  }
  ASSERT_FALSE(table.empty());
  std::istringstream lines(help.out);
  bool listing = false;
  int names = 0;
  while (std::getline(lines, line)) {
    if (line == "Subcommands:" || line.rfind("Programs beside pinpoint", 0) == 0) {
      listing = true;
    } else if (listing && line.rfind("  ", 0) == 0 && line.size() > 2 && line[2] != ' ') {
      std::string name = line.substr(2, line.find(' ', 2) - 2);
      ++names;
      EXPECT_NE(table.find("`" + name + "`"), std::string::npos)
          << name << " is not in docs/cli.md's table";
    } else if (line.empty()) {
      listing = false;
    }
  }
  EXPECT_GE(names, 15) << help.out;
}

TEST_F(CliUsageTest, OutputFileHelpNamesEveryPlaceholder) {
  auto help = h_.Cli({"submit", "--help"});
  ASSERT_EQ(help.exit_code, 0);
  for (const char* flag : {"-o,--output", "-e,--error"}) {
    size_t at = help.out.find(flag);
    ASSERT_NE(at, std::string::npos) << help.out;
    std::string text = help.out.substr(at, help.out.find("\n  -", at + 1) - at);
    for (const char* placeholder : {"%j", "%J", "%u", "%x", "%A", "%a", "%N"}) {
      EXPECT_NE(text.find(placeholder), std::string::npos)
          << flag << " lacks " << placeholder << ": " << text;
    }
  }
}

}  // namespace
}  // namespace pinpoint::testing
