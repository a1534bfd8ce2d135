#include "cli/completion.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

namespace pinpoint::cli {
namespace {

class CompletionTest : public ::testing::Test {
 protected:
  CompletionTest() {
    app_.add_option("--socket", value_, "where it's served");
    CLI::App* run = app_.add_subcommand("run", "Run: something");
    run->add_option("-n,--count", value_, "how many");
    run->add_flag("--wait", flag_, "wait");
    run->add_option("command", rest_, "what to run");
    run->add_option("--hidden", value_, "not offered")->group("");
    CLI::App* more = run->add_subcommand("more", "deeper");
    more->add_flag("--deep", flag_, "deep");
  }
  std::string value_;
  bool flag_ = false;
  std::vector<std::string> rest_;
  CLI::App app_{"tool"};
};

TEST_F(CompletionTest, DescribesCommandsAndNamedOptions) {
  CompletionCommand root = DescribeApp(app_);
  ASSERT_EQ(root.subcommands.size(), 1u);
  const CompletionCommand& run = root.subcommands[0];
  EXPECT_EQ(run.name, "run");
  std::vector<std::string> names;
  for (const auto& o : run.options) {
    for (const auto& n : o.names) names.push_back(n + (o.takes_value ? "=" : ""));
  }
  // The positional `command` is not an option; -n/--count takes a value, --wait does not; an
  // option hidden from the help (group "") is not offered either.
  EXPECT_EQ(names, (std::vector<std::string>{"-h", "--help", "-n=", "--count=", "--wait"}));
  ASSERT_EQ(run.subcommands.size(), 1u);
  EXPECT_EQ(run.subcommands[0].name, "more");
}

TEST_F(CompletionTest, ScriptsKeyEveryCommandByItsPath) {
  CompletionCommand root = DescribeApp(app_);
  root.name = "tool";
  std::string bash = BashCompletion(root);
  EXPECT_NE(bash.find("subs['.']='run'"), std::string::npos) << bash;
  EXPECT_NE(bash.find("vals['run']='-n --count'"), std::string::npos) << bash;
  EXPECT_NE(bash.find("opts['run more']='-h --help --deep'"), std::string::npos) << bash;
  EXPECT_NE(bash.find("complete -F _tool_complete tool\n"), std::string::npos) << bash;
  std::string zsh = ZshCompletion(root);
  EXPECT_EQ(zsh.rfind("#compdef tool\n", 0), 0u);
  // Colons are escaped in zsh's word:description pairs, quotes in the shell words.
  EXPECT_NE(zsh.find("run:Run\\: something"), std::string::npos) << zsh;
  EXPECT_NE(zsh.find("--socket:where it'\\''s served"), std::string::npos) << zsh;
}

}  // namespace
}  // namespace pinpoint::cli
