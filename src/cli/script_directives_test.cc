#include "cli/script_directives.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>

#include "cli/submit_command.h"
#include "common/test_dir.h"

namespace pinpoint::cli {
namespace {

TEST(ParseDirectivesTest, SbatchThenPinpointLinesUpToTheFirstCommand) {
  std::string text =
      "#!/bin/bash\n"
      "#SBATCH -J scripted --time=00:10:00\n"
      "\n"
      "# a comment\n"
      "#PINPOINT --name 'pinpoint name'\n"
      "#SBATCH -c 2   # two CPUs\n"
      "#SBATCHX --not-one\n"
      "echo start\n"
      "#SBATCH --mem=1G\n";
  EXPECT_EQ(ParseDirectives(text), (std::vector<std::string>{"-J", "scripted", "--time=00:10:00",
                                                             "-c", "2", "--name", "pinpoint name"}))
      << "#PINPOINT after #SBATCH (it wins); nothing after the first command";
  EXPECT_TRUE(ParseDirectives("#!/bin/sh\necho hi\n").empty());
  EXPECT_EQ(ParseDirectives("#!/bin/sh\r\n#SBATCH -c 4\r\n"),
            (std::vector<std::string>{"-c", "4"}));
}

TEST(ScriptFileTest, AScriptInTheDirectoryAsSbatchFindsIt) {
  TestDir dir;
  std::ofstream(dir.path() + "/job.sh") << "#!/bin/sh\n#SBATCH -c 2\ntrue\n";
  std::ofstream(dir.path() + "/data.txt") << "not a script\n";
  ::mkdir((dir.path() + "/sub").c_str(), 0755);
  std::string text;
  EXPECT_EQ(ScriptFile("job.sh", dir.path(), &text), dir.path() + "/job.sh");
  EXPECT_EQ(text, "#!/bin/sh\n#SBATCH -c 2\ntrue\n");
  EXPECT_EQ(ScriptFile(dir.path() + "/job.sh", "/"), dir.path() + "/job.sh") << "a path as given";
  EXPECT_EQ(ScriptFile("data.txt", dir.path()), std::nullopt) << "no #!: not a script";
  EXPECT_EQ(ScriptFile("python3", dir.path()), std::nullopt)
      << "a program on the PATH is not looked for here";
  EXPECT_EQ(ScriptFile("sub", dir.path()), std::nullopt);
}

struct SubmitApp {
  SubmitApp() {
    submit->add_option("-c,--cpus", cpus);
    submit->add_option("-J,--name", name);
    submit->add_option("--gpus", gpus);
    submit->add_option("-p,--partition", partition, "Slurm's; refused with what to use instead");
    submit->add_option("command", command);
  }
  CLI::App app;
  CLI::App* submit = app.add_subcommand("submit");
  int cpus = 1, gpus = 0;
  std::string name, partition;
  std::vector<std::string> command;
};

TEST(DirectiveOptionsTest, KnownOptionsPassOthersAreOneWarningEach) {
  SubmitApp a;
  std::vector<std::string> warnings;
  auto out = DirectiveOptions(*a.submit,
                              {"-J", "x", "--partition=gpu", "-c", "2", "--gres=gpu:a100:2",
                               "--ntasks", "4", "-p", "long", "stray"},
                              "job.sh", &warnings);
  EXPECT_EQ(out, (std::vector<std::string>{"-J", "x", "-c", "2", "--gpus", "a100:2"}));
  EXPECT_EQ(
      warnings,
      (std::vector<std::string>{
          "pinpoint: job.sh: directive --partition=gpu is not an option of pinpoint submit; "
          "ignored",
          "pinpoint: job.sh: directive --ntasks 4 is not an option of pinpoint submit; ignored",
          "pinpoint: job.sh: directive -p long is not an option of pinpoint submit; ignored",
          "pinpoint: job.sh: directive stray is not an option of pinpoint submit; ignored"}));
}

// Every GPU form of Slurm's --gres: a count, a type (any GPU of the node), sockets, and other
// resources beside them, which are no GPUs (`gpu:v100:1,nvme:200` is one GPU, not 200).
TEST(GresGpusTest, EveryGpuFormAndOtherResourcesApart) {
  std::vector<std::string> others;
  EXPECT_EQ(GresGpus("gpu", &others), "1");
  EXPECT_EQ(GresGpus("gpu:4", &others), "4");
  EXPECT_EQ(GresGpus("gpu:a100", &others), "a100:1");
  EXPECT_EQ(GresGpus("gpu:a100:2(S:0-1)", &others), "a100:2");
  EXPECT_EQ(GresGpus("gpu:v100:1,nvme:200", &others), "v100:1");
  EXPECT_EQ(others, std::vector<std::string>{"nvme:200"});
  others.clear();
  EXPECT_EQ(GresGpus("nvme:200", &others), std::nullopt);
  EXPECT_EQ(others, std::vector<std::string>{"nvme:200"});
  EXPECT_EQ(GresGpus("gpu:a:b:c", &others), std::nullopt);
  EXPECT_EQ(GresGpus("gpu::2", &others), std::nullopt);
  EXPECT_EQ(GresGpus("gpus:2", &others), std::nullopt) << "no such gres";
}

// A warning names the script and the directive's line; other gres are one warning each; an
// option whose value is missing at the end never takes the command line's next word (`#SBATCH
// --output` made `--hold` the output file); a long option cut short is its whole name.
TEST(DirectiveOptionsTest, LinesOtherGresMissingValuesAndAbbreviations) {
  SubmitApp a;
  std::vector<std::string> warnings;
  std::vector<int> lines = {2, 3, 3, 4, 5};
  auto out = DirectiveOptions(*a.submit,
                              {"--gres=gpu:v100:1,nvme:200", "--na", "x", "--nodes=2", "--name"},
                              "job.sh", &warnings, nullptr, &lines);
  EXPECT_EQ(out, (std::vector<std::string>{"--gpus", "v100:1", "--name", "x"}));
  EXPECT_EQ(
      warnings,
      (std::vector<std::string>{
          "pinpoint: job.sh:2: directive --gres nvme:200: pinpoint's node has no such resource; "
          "ignored",
          "pinpoint: job.sh:4: directive --nodes=2 is not an option of pinpoint submit; ignored",
          "pinpoint: job.sh:5: directive --name has no value; ignored"}));
}

// Root submitting a user's script (`pinpoint submit --as-user alice job.sh`): what the script's
// directives gave, and from which line, goes to the daemon as the fields it judges with alice's
// rights (ScriptFieldsOf); what root typed on the command line does not.
TEST(ApplyScriptTest, TheScriptsOwnOptionsAreNamedWithTheirLines) {
  TestDir dir;
  std::string script = dir.path() + "/job.sh";
  std::ofstream(script) << "#!/bin/sh\n"
                           "#SBATCH -J scripted\n"
                           "#PINPOINT --priority 1000000\n"
                           "#PINPOINT --hold --afterok 5 --as-user bob\n"
                           "#SBATCH --array=1-3 -c 2 --time 10\n"
                           "#SBATCH --priority 9\n"
                           "true\n";
  CLI::App app;
  CLI::App* sub = app.add_subcommand("submit");
  SubmitArgs submit;
  AddSubmitOptions(sub, submit);
  std::vector<std::string> args = {"submit", "--as-user", "alice", "--time=5", script};
  std::vector<std::string> warnings;
  std::vector<ScriptOption> from;
  ApplyScript(app, args, 0, &warnings, &from);
  EXPECT_TRUE(warnings.empty());
  ScriptOrigins fields = ScriptFieldsOf(from);
  using F = ScriptField;
  // #PINPOINT lines come after #SBATCH ones: --priority's last value is line 3's.
  EXPECT_EQ(fields, (ScriptOrigins{{F::kName, script + ":2"},
                                   {F::kPriority, script + ":3"},
                                   {F::kHold, script + ":4"},
                                   {F::kAfterOk, script + ":4"},
                                   {F::kArray, script + ":5"}}))
      << "--as-user and --time were typed: root's; -c is judged alike for everyone";

  std::vector<std::string> typed = {"submit",    "--priority", "1000000",
                                    "--as-user", "alice",      script};
  ApplyScript(app, typed, 0, &warnings, &from);
  EXPECT_EQ(ScriptFieldsOf(from).count(F::kPriority), 0u) << "root's own --priority";
  EXPECT_EQ(ScriptFieldsOf(from).count(F::kTimeLimit), 1u);
}

// An abbreviation or Slurm's other name in a script (`--prio`, `-a`, `--dep`) is the option it
// names, and so carries the rights of the user the job runs as: it must not pass as root's.
TEST(ApplyScriptTest, AnAbbreviatedDirectiveIsStillTheScripts) {
  TestDir dir;
  std::string script = dir.path() + "/job.sh";
  std::ofstream(script) << "#!/bin/sh\n"
                           "#SBATCH --prio=1000000 -a 1-3\n"
                           "#SBATCH --dep afterok:5 --as-u bob\n"
                           "true\n";
  CLI::App app;
  CLI::App* sub = app.add_subcommand("submit");
  SubmitArgs submit;
  AddSubmitOptions(sub, submit);
  std::vector<std::string> args = {"submit", "--as-user", "alice", script};
  std::vector<std::string> warnings;
  std::vector<ScriptOption> from;
  ApplyScript(app, args, 0, &warnings, &from);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  using F = ScriptField;
  ScriptOrigins fields = ScriptFieldsOf(from);
  EXPECT_EQ(fields, (ScriptOrigins{{F::kPriority, script + ":2"},
                                   {F::kArray, script + ":2"},
                                   {F::kAfter, script + ":3"},
                                   {F::kAfterOk, script + ":3"}}))
      << "--as-u was typed too (--as-user): root's";
}

// #SBATCH --qos (Slurm's QOS) is submit's own option now, not a warning, and a field of the script
// the daemon judges with its user's rights.
TEST(ApplyScriptTest, AScriptsQosIsItsOwnField) {
  TestDir dir;
  std::string script = dir.path() + "/job.sh";
  std::ofstream(script) << "#!/bin/sh\n#SBATCH --qos=scavenger\ntrue\n";
  CLI::App app;
  CLI::App* sub = app.add_subcommand("submit");
  SubmitArgs submit;
  AddSubmitOptions(sub, submit);
  std::vector<std::string> args = {"submit", script};
  std::vector<std::string> warnings;
  std::vector<ScriptOption> from;
  ApplyScript(app, args, 0, &warnings, &from);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  EXPECT_EQ(ScriptFieldsOf(from), (ScriptOrigins{{ScriptField::kQos, script + ":2"}}));
  EXPECT_NE(std::find(args.begin(), args.end(), "--qos=scavenger"), args.end())
      << "given to submit's own --qos";
}

}  // namespace
}  // namespace pinpoint::cli
