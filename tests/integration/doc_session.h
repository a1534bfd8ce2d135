// The command examples of the documentation, read as shell sessions so that a test can run them
// (docs_examples_test.cc; the syntax is described for writers in docs/cli.md, "How the examples
// are checked").
//
// A fenced block's info string says what it is:
//   console                a session: `$ COMMAND` lines, each followed by the output it prints
//                          (stdout and stderr together); run and compared.
//   console skip: REASON   a session that cannot run in a test (a GPU, Slurm, a root install):
//                          not run, reported as skipped with REASON.
//   text                   no command: a synopsis, a fragment of output.
// In expected output, `{{word}}` stands for any text on that line (a time, a version), `...` alone
// on a line for any number of lines, and a run of spaces for any run of spaces (column widths
// follow the values).
#pragma once

#include <string>
#include <vector>

namespace pinpoint::testing {

struct FencedBlock {
  int line = 0;      // of the opening fence, from 1
  std::string info;  // the info string, trimmed
  std::vector<std::string> lines;
};

// Every fenced (```) block of a markdown text, in order.
std::vector<FencedBlock> FencedBlocks(const std::string& markdown);

struct SessionStep {
  int line = 0;  // of the `$ ` line
  std::string command;
  std::vector<std::string> expected;
};

// The steps of a console block: each `$ ` line and the lines up to the next one. A command line
// ending in `\` continues on the next line.
std::vector<SessionStep> SessionSteps(const FencedBlock& block);

// Whether `actual` lines are what `expected` lines describe (placeholders as above; trailing
// spaces ignored on both sides).
bool OutputMatches(const std::vector<std::string>& expected,
                   const std::vector<std::string>& actual);

// Splits text into lines; a last line without a newline counts, a trailing newline adds none.
std::vector<std::string> SplitLines(const std::string& text);

}  // namespace pinpoint::testing
