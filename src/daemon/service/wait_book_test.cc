// WaitBook (wait_book.h): who waits for which job, what a job's end answers, and the ids held
// against the bounds.
#include "daemon/service/wait_book.h"

#include <gtest/gtest.h>

#include "pinpoint/api.h"

namespace pinpoint::daemon {
namespace {

api::Caller UserOf(uint32_t uid) {
  api::Caller caller;
  caller.uid = uid;
  return caller;
}

TEST(WaitBookTest, AJobsEndAnswersItsOwnWaitsAndTheGroupsItWasTheLastOf) {
  WaitBook book;
  book.WaitFor(1, UserOf(1000), 7);
  book.WaitForAll(2, UserOf(1000), {7, 8, 8}, {7, 8});
  EXPECT_EQ(book.held(), 4u) << "one, then three ids asked (repeats count)";

  std::vector<WaitBook::Answer> first = book.JobEnded(7);
  ASSERT_EQ(first.size(), 1u) << "the group still waits for 8";
  EXPECT_EQ(first[0].conn, 1u);
  EXPECT_TRUE(first[0].ids.empty()) << "the wait for job 7 alone";
  EXPECT_EQ(book.held(), 3u);

  std::vector<WaitBook::Answer> last = book.JobEnded(8);
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].conn, 2u);
  EXPECT_EQ(last[0].ids, (std::vector<JobId>{7, 8, 8})) << "as asked";
  EXPECT_EQ(book.held(), 0u);
  EXPECT_TRUE(book.JobEnded(8).empty()) << "answered once";
}

TEST(WaitBookTest, BoundsCountEachUserAndAllAndRootPassesTheUsersOne) {
  WaitBook book;
  std::vector<JobId> many(kWaitMaxHeldIdsPerUid, 1);
  book.WaitForAll(1, UserOf(1000), many, {1});
  Status more = book.MayHold(UserOf(1000), 1);
  EXPECT_EQ(more.code(), Code::kUnavailable);
  EXPECT_EQ(more.message(), "uid 1000 already waits for " + std::to_string(kWaitMaxHeldIdsPerUid) +
                                " jobs; one user may wait for at most " +
                                std::to_string(kWaitMaxHeldIdsPerUid) + " at once");
  EXPECT_TRUE(book.MayHold(UserOf(1001), 1).ok()) << "another user";
  EXPECT_TRUE(book.MayHold(UserOf(0), 1).ok()) << "root";
  EXPECT_EQ(book.MayHold(UserOf(0), kWaitMaxHeldIds).code(), Code::kUnavailable)
      << "the bound of all, root's too";
}

TEST(WaitBookTest, AClosedConnectionsWaitsAreForgottenAndTheirIdsGivenBack) {
  WaitBook book;
  book.WaitFor(1, UserOf(1000), 7);
  book.WaitForAll(1, UserOf(1000), {7, 9}, {7, 9});
  book.WaitFor(2, UserOf(1000), 7);
  book.Closed(1);
  EXPECT_EQ(book.held(), 1u) << "connection 2's one id";
  std::vector<WaitBook::Answer> answers = book.JobEnded(7);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].conn, 2u);
  EXPECT_TRUE(book.JobEnded(9).empty());
  EXPECT_EQ(book.held(), 0u);
  EXPECT_TRUE(book.MayHold(UserOf(1000), kWaitMaxHeldIdsPerUid).ok()) << "all given back";
}

}  // namespace
}  // namespace pinpoint::daemon
