#include "cli/script_directives.h"

#include <sys/stat.h>

#include <fstream>

#include <gtest/gtest.h>

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
  EXPECT_EQ(ParseDirectives(text), (std::vector<std::string>{"-J", "scripted", "--time=00:10:00", "-c", "2", "--name",
                                                             "pinpoint name"}))
      << "#PINPOINT after #SBATCH (it wins); nothing after the first command";
  EXPECT_TRUE(ParseDirectives("#!/bin/sh\necho hi\n").empty());
  EXPECT_EQ(ParseDirectives("#!/bin/sh\r\n#SBATCH -c 4\r\n"), (std::vector<std::string>{"-c", "4"}));
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
  EXPECT_EQ(ScriptFile("python3", dir.path()), std::nullopt) << "a program on the PATH is not looked for here";
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
  auto out = DirectiveOptions(*a.submit, {"-J", "x", "--partition=gpu", "-c", "2", "--gres=gpu:a100:2", "--ntasks", "4",
                                          "-p", "long", "stray"},
                              "job.sh", &warnings);
  EXPECT_EQ(out, (std::vector<std::string>{"-J", "x", "-c", "2", "--gpus", "2"}));
  EXPECT_EQ(warnings, (std::vector<std::string>{
                          "pinpoint: job.sh: directive --partition=gpu is not an option of pinpoint submit; ignored",
                          "pinpoint: job.sh: directive --ntasks 4 is not an option of pinpoint submit; ignored",
                          "pinpoint: job.sh: directive -p long is not an option of pinpoint submit; ignored",
                          "pinpoint: job.sh: directive stray is not an option of pinpoint submit; ignored"}));
}

}  // namespace
}  // namespace pinpoint::cli
