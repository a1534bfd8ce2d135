// Every command example of README.md and docs/cli.md is run and its output compared (the block
// syntax: doc_session.h; for writers: docs/cli.md, "How the examples are checked"). Each console
// block runs in a fresh directory against a fresh pinpointd on the simulated two-H100 node, as
// root, as the docs say their samples were made; its jobs are cancelled at its end.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "integration/doc_session.h"
#include "integration/harness.h"

namespace pinpoint::testing {
namespace {

std::string Quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Ran {
  int exit_code = 0;
  std::string output;  // stdout and stderr together
};

// Runs `command` with bash in `dir`, `pinpoint` first on the PATH, `$?` the previous step's code.
Ran RunStep(const Harness& h, const std::string& dir, const std::string& command,
            int previous_exit) {
  std::string script = h.dir() + "/step.sh";
  std::ofstream(script) << "cd " << Quote(dir) << " || exit 99\nexport PATH=" << Quote(BinDir())
                        << ":\"$PATH\" PINPOINT_SOCKET=" << Quote(h.socket())
                        << " NO_COLOR=1 TERM=dumb\n(exit " << previous_exit << ")\n"
                        << command << "\n";
  FILE* pipe = ::popen(("timeout 120 bash " + Quote(script) + " 2>&1 </dev/null").c_str(), "r");
  Ran ran;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) ran.output.append(buf, n);
  int status = ::pclose(pipe);
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return ran;
}

// What a failed step prints: where it is, and expected against actual line by line.
std::string Diff(const std::vector<std::string>& expected, const std::vector<std::string>& actual) {
  std::string out = "--- expected (the docs)\n";
  for (const auto& l : expected) out += "  " + l + "\n";
  out += "+++ actual\n";
  for (const auto& l : actual) out += "  " + l + "\n";
  return out;
}

// Ends what the block left running, so that no job outlives the test.
void CancelActiveJobs(const Harness& h) {
  CliResult q = h.Cli({"--json", "queue"});
  auto jobs = nlohmann::json::parse(q.out, nullptr, false);
  if (!jobs.is_array() || jobs.empty()) return;
  std::vector<std::string> cancel = {"cancel"}, wait = {"wait"};
  for (const auto& job : jobs) {
    cancel.push_back(std::to_string(job.value("id", 0)));
    wait.push_back(cancel.back());
  }
  h.Cli(cancel);
  h.Cli(wait);
}

void RunBlock(const std::string& file, const FencedBlock& block) {
  std::vector<SessionStep> steps = SessionSteps(block);
  ASSERT_FALSE(steps.empty()) << file << ":" << block.line
                              << ": a console block needs a `$ ` command";
  Harness h("simulated:h100x2",
            "\"host_cpus\": 32, \"host_mem\": \"256G\", \"cancel_grace_ms\": 2000, "
            "\"mps_affinity_ms\": 0");
  h.StartDaemon();
  std::string dir = h.dir() + "/work";
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  int previous_exit = 0;
  for (const auto& step : steps) {
    Ran ran = RunStep(h, dir, step.command, previous_exit);
    previous_exit = ran.exit_code;
    std::vector<std::string> actual = SplitLines(ran.output);
    if (!OutputMatches(step.expected, actual)) {
      ADD_FAILURE() << file << ":" << step.line << ": $ " << step.command << "\n"
                    << Diff(step.expected, actual);
      break;  // later steps build on this one
    }
  }
  CancelActiveJobs(h);
}

// Runs every console block of `file` (relative to the source tree) and says which were skipped.
void CheckExamples(const std::string& file) {
  std::string text = Slurp(std::string(PINPOINT_SOURCE_DIR) + "/" + file);
  ASSERT_FALSE(text.empty()) << file;
  int run = 0;
  std::vector<std::string> skipped;
  for (const FencedBlock& block : FencedBlocks(text)) {
    std::string where = file + ":" + std::to_string(block.line);
    if (block.info == "text") {
      for (const auto& line : block.lines)
        EXPECT_NE(line.rfind("$ ", 0), 0u)
            << where << ": a session belongs in a console block: " << line;
      continue;
    }
    if (block.info.rfind("console skip:", 0) == 0) {
      std::string reason = block.info.substr(13);
      EXPECT_NE(reason.find_first_not_of(' '), std::string::npos)
          << where << ": skip: needs a reason";
      std::vector<SessionStep> steps = SessionSteps(block);
      std::string first = steps.empty() ? std::string("?") : steps[0].command;
      first = first.substr(0, first.find("  #"));  // without its comment
      skipped.push_back(where + " `" + first + "` (" + reason.substr(1) + ")");
      continue;
    }
    if (block.info != "console") {
      ADD_FAILURE() << where
                    << ": a fenced block must say what it is: ```console (run by this test), "
                    << "```console skip: REASON, or ```text (no command); got '```" << block.info
                    << "'";
      continue;
    }
    ++run;
    RunBlock(file, block);
  }
  std::cout << file << ": " << run << " examples run, " << skipped.size() << " skipped\n";
  for (const auto& s : skipped) std::cout << "  skipped: " << s << "\n";
  EXPECT_GT(run + static_cast<int>(skipped.size()), 0) << file << " has no example";
}

class DocsExamplesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the samples are made as root (their user is root)";
  }
};

TEST_F(DocsExamplesTest, Readme) { CheckExamples("README.md"); }
TEST_F(DocsExamplesTest, CliMd) { CheckExamples("docs/cli.md"); }

}  // namespace
}  // namespace pinpoint::testing
