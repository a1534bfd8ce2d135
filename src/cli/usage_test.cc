#include "cli/usage.h"

#include <gtest/gtest.h>

namespace pinpoint::cli {
namespace {

TEST(NearestTest, SuggestsTheCloseNameOnly) {
  std::vector<std::string> submit = {"--gpus", "--gpu-mem", "--gpu-share", "--mem",
                                     "--name", "-h",        "--help"};
  EXPECT_EQ(Nearest("--gpu-memory", submit), "--gpu-mem");
  EXPECT_EQ(Nearest("--gpu-shares", submit), "--gpu-share");
  EXPECT_EQ(Nearest("--nmae", submit), "--name") << "a swap counts one";
  EXPECT_EQ(Nearest("--frobnicate", submit), "");
  EXPECT_EQ(Nearest("-x", submit), "") << "one letter is never 'close' to another";
  EXPECT_EQ(Nearest("queu", {"submit", "queue", "show"}), "queue");
}

// Close in letters, far in meaning: never offered.
TEST(NearestTest, NeverOffersTheOppositeOrAnotherWord) {
  EXPECT_EQ(Nearest("--no-requeue", {"--requeue", "--name"}), "")
      << "the opposite of what was typed";
  EXPECT_EQ(Nearest("--requeue", {"--no-requeue"}), "");
  EXPECT_EQ(Nearest("--not-before", {"--before"}), "");
  EXPECT_EQ(Nearest("--gpus-per-task", {"--cpus-per-task", "--gpus"}), "") << "another resource";
  EXPECT_EQ(Nearest("requeue", {"submit", "queue", "show"}), "") << "another command";
  EXPECT_EQ(Nearest("--gpus-per-tsak", {"--gpus-per-task"}), "--gpus-per-task")
      << "a typo still is";
}

// The app RunCli builds, in small: two globals, a subcommand with a value option, one with a
// job's command after --.
struct App {
  App() {
    app.add_option("--socket", socket);
    app.add_flag("--json", json);
    CLI::App* queue = app.add_subcommand("queue", "list");
    queue->add_flag("-a,--all", all);
    queue->add_option("-n,--limit", limit);
    CLI::App* submit = app.add_subcommand("submit", "submit");
    submit->add_option("--priority", priority);
    submit->add_option("command", command);
    CLI::App* show = app.add_subcommand("show", "show");
    show->add_option("job", job);
    app.add_subcommand("hidden", "not offered")->group("");
    CheckJobIds(app);
  }
  CLI::App app{"t"};
  std::string socket;
  bool json = false, all = false;
  int limit = 0, priority = 0;
  int64_t job = 0;
  std::vector<std::string> command;
};

TEST(ArrangeArgsTest, GlobalOptionsAfterTheSubcommandMoveBeforeIt) {
  App a;
  auto r = ArrangeArgs(a.app, {"queue", "--json", "-n", "5", "--socket", "/s", "--all"}, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->args,
            (std::vector<std::string>{"--json", "--socket", "/s", "queue", "-n", "5", "--all"}));
  EXPECT_EQ(r->subcommand, "queue");
  EXPECT_EQ(r->index, 3u);
}

TEST(ArrangeArgsTest, NothingAfterDashDashIsReadOrMoved) {
  App a;
  auto r = ArrangeArgs(
      a.app,
      {"submit", "--priority", "-5", "--json", "--", "python", "--json", "--gpu-memory", "-x"}, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->args, (std::vector<std::string>{"--json", "submit", "--priority", "-5", "--",
                                               "python", "--json", "--gpu-memory", "-x"}));
}

TEST(ArrangeArgsTest, UnknownOptionIsNamedWithTheNearest) {
  App a;
  auto r = ArrangeArgs(a.app, {"queue", "--lmit", "5"}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "pinpoint queue: unknown option --lmit (did you mean --limit?)");
  r = ArrangeArgs(a.app, {"queue", "--jsno"}, {});
  EXPECT_EQ(r.status().message(), "pinpoint queue: unknown option --jsno (did you mean --json?)")
      << "globals are offered";
  r = ArrangeArgs(a.app, {"--sock=/x", "queue"}, {});
  EXPECT_EQ(r.status().message(), "pinpoint: unknown option --sock (did you mean --socket?)");
}

// CLI11's own words reach no one: an option without its value says so ("1 required TEXT
// missing" did), and extra words are named in the order typed (they were reversed).
TEST(ParseErrorTextTest, AMissingValueAndExtraWordsInOrder) {
  auto error = [](const std::string& line) -> std::string {
    App a;
    try {
      a.app.parse(line);
    } catch (const CLI::ParseError& e) {
      return ParseErrorText(e, a.app.get_subcommand("queue"));
    }
    return "parsed";
  };
  EXPECT_EQ(error("queue -n"), "-n/--limit needs a value");
  EXPECT_EQ(error("show 1 2 3"), "unexpected arguments '2 3'");
  EXPECT_EQ(error("show 1 2"), "unexpected argument '2'");
}

// As sbatch: the command's first word ends submit's options; what follows is the command's, its
// options included (a script's own arguments: `submit job.sh --epochs 1`), in their order.
TEST(ArrangeArgsTest, EveryWordAfterTheCommandIsTheCommands) {
  App a;
  auto r =
      ArrangeArgs(a.app, {"submit", "--priority", "2", "ls", "-la", "--priority", "b", "a"}, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->args, (std::vector<std::string>{"submit", "--priority", "2", "--", "ls", "-la",
                                               "--priority", "b", "a"}));
  r = ArrangeArgs(a.app, {"submit", "job.sh", "--", "a", "b"}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "pinpoint submit: '--' after the command 'job.sh': the command goes after -- (pinpoint "
            "submit [OPTIONS] -- "
            "job.sh ARGS...), or without -- at all");
  r = ArrangeArgs(a.app, {"submit", "--priority", "4", "GB", "--", "true"}, {});
  EXPECT_EQ(r.status().message(),
            "pinpoint submit: a size is one word: write 4GB, not 4 GB ('GB' was read as the "
            "command, which goes after --)");
}

// sbatch takes a long option cut short where it names one option: --prio=5 is --priority=5.
TEST(ArrangeArgsTest, AnUnambiguousAbbreviationIsTheWholeOption) {
  App a;
  auto r = ArrangeArgs(a.app, {"submit", "--prio=5", "--pri", "6", "--", "true"}, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->args,
            (std::vector<std::string>{"submit", "--priority=5", "--priority", "6", "--", "true"}));
  r = ArrangeArgs(a.app, {"submit", "--p", "6", "--", "true"}, {});
  EXPECT_FALSE(r.ok()) << "one letter is too short to tell";
}

TEST(ArrangeArgsTest, UnknownCommandIsNamedWithTheNearestOrTheList) {
  App a;
  auto r = ArrangeArgs(a.app, {"--json", "shwo", "1"}, {});
  EXPECT_EQ(r.status().message(), "pinpoint: unknown command 'shwo' (did you mean show?)");
  r = ArrangeArgs(a.app, {"frobnicate"}, {});
  EXPECT_EQ(r.status().message(),
            "pinpoint: unknown command 'frobnicate' (commands: queue, submit, show)");
  r = ArrangeArgs(a.app, {"\x1b[2J"}, {});
  EXPECT_EQ(r.status().message().find('\x1b'), std::string::npos) << "escaped";
}

TEST(ArrangeArgsTest, AnOpaqueSubcommandKeepsItsWords) {
  App a;
  auto r = ArrangeArgs(a.app, {"--socket", "/s", "slurm", "--help", "--json"}, {"slurm"});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->opaque);
  EXPECT_EQ(r->index, 2u);
  EXPECT_EQ(r->args, (std::vector<std::string>{"--socket", "/s", "slurm", "--help", "--json"}));
}

TEST(CheckJobIdsTest, OnePhrasingForEveryBadId) {
  for (const char* id : {"0", "-1", "abc", "1.5", "99999999999999999999"}) {
    App a;
    std::vector<std::string> words = {id, "show"};  // CLI11 reads them last first
    try {
      a.app.parse(words);
      ADD_FAILURE() << id << " accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                "'" + std::string(id) + "' is not a job id (job ids are whole numbers from 1)");
    }
  }
  App a;
  std::vector<std::string> words = {"17", "show"};
  a.app.parse(words);
  EXPECT_EQ(a.job, 17);
}

// Slurm's options that mean nothing here are known (never "unknown option"), not offered, and
// refused with what to use instead.
TEST(RefuseSlurmOnlyTest, RefusedWithWhatToUseAndNeverSuggested) {
  CLI::App app{"pinpoint"};
  CLI::App* submit = app.add_subcommand("submit", "");
  std::vector<std::string> command;
  submit->add_option("command", command, "");
  RefuseSlurmOnly(submit);
  auto arranged = ArrangeArgs(app, {"submit", "-p", "gpu", "--", "true"}, {});
  ASSERT_TRUE(arranged.ok()) << arranged.status().ToString();
  try {
    app.parse(std::vector<std::string>{"true", "--", "gpu", "-p",
                                       "submit"});  // CLI11 takes them reversed
    FAIL() << "-p was accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(
        e.what(),
        "-p/--partition has no meaning on a pinpoint node: it has one queue; leave it out (on a "
        "Slurm cluster, sbatch -p chooses the node)");
  }
  auto typo = ArrangeArgs(app, {"submit", "--partitoin", "gpu", "--", "true"}, {});
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().message().find("did you mean"), std::string::npos)
      << typo.status().message();
}

}  // namespace
}  // namespace pinpoint::cli
