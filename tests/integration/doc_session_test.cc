// The reading and matching of documentation sessions (doc_session.h), without a daemon.
#include "integration/doc_session.h"

#include <gtest/gtest.h>

namespace pinpoint::testing {
namespace {

TEST(DocSessionTest, BlocksAndStepsAreRead) {
  std::string md =
      "text\n```console\n$ pinpoint submit \\\n    -- true\nsubmitted job 1\n$ echo $?\n0\n```\n"
      "```text\npinpoint queue [-a]\n```\n";
  std::vector<FencedBlock> blocks = FencedBlocks(md);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].info, "console");
  EXPECT_EQ(blocks[0].line, 2);
  EXPECT_EQ(blocks[1].info, "text");
  std::vector<SessionStep> steps = SessionSteps(blocks[0]);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].command, "pinpoint submit \\\n    -- true");
  EXPECT_EQ(steps[0].expected, std::vector<std::string>{"submitted job 1"});
  EXPECT_EQ(steps[1].line, 6);
  EXPECT_EQ(steps[1].expected, std::vector<std::string>{"0"});
}

TEST(DocSessionTest, PlaceholdersAndSpacesMatchWhatVaries) {
  EXPECT_TRUE(OutputMatches({"1   root  running  {{time}}  -"}, {"1   root  running  12.3s  -"}));
  EXPECT_TRUE(OutputMatches({"a  b"}, {"a     b   "})) << "column widths follow the values";
  EXPECT_FALSE(OutputMatches({"a b"}, {"ab"}));
  EXPECT_FALSE(OutputMatches({"job 1 (x.y)"}, {"job 1 (xzy)"})) << "a dot is a dot";
  EXPECT_FALSE(OutputMatches({"submitted job 1"}, {"submitted job 1", "more"}));
  EXPECT_TRUE(OutputMatches({"first", "...", "last"}, {"first", "a", "b", "last"}));
  EXPECT_TRUE(OutputMatches({"first", "...", "last"}, {"first", "last"}));
  EXPECT_FALSE(OutputMatches({"first", "...", "last"}, {"first", "a"}));
}

}  // namespace
}  // namespace pinpoint::testing
