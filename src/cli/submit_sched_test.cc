#include "cli/submit_sched.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace pinpoint::cli {
namespace {

TEST(ParseJobIdListTest, OneOrManyIds) {
  EXPECT_EQ(*ParseJobIdList("3", "--after"), (std::vector<JobId>{3}));
  EXPECT_EQ(*ParseJobIdList("3,4,17", "--after"), (std::vector<JobId>{3, 4, 17}));
  EXPECT_EQ(*ParseJobIdList("999999999999999999", "--after"),
            (std::vector<JobId>{999999999999999999}));
}

TEST(ParseJobIdListTest, EachBadItemIsNamedWithTheFlag) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"abc", "--afterok: 'abc' is not a job id (job ids are whole numbers from 1)"},
      {"", "--afterok: '' is not a job id"},
      {"3,", "--afterok: '' is not a job id"},
      {"3,,4", "--afterok: '' is not a job id"},
      {"0", "--afterok: '0' is not a job id"},
      {"-3", "--afterok: '-3' is not a job id"},
      {"3 4", "--afterok: '3 4' is not a job id"},
      {"1,2,x\x1b[2J", "--afterok: 'x\\x1b[2J' is not a job id"},
      {"9999999999999999999", "--afterok: '9999999999999999999' is not a job id"},
  };
  for (const auto& c : cases) {
    auto ids = ParseJobIdList(c.text, "--afterok");
    ASSERT_FALSE(ids.ok()) << c.text;
    EXPECT_EQ(ids.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(ids.status().message().rfind(c.message, 0), 0u) << ids.status().message();
  }
}

TEST(ApplySubmitSchedTest, SetsWhatWasGiven) {
  JobRequest r;
  ASSERT_TRUE(ApplySubmitSched({"1-00:00:00", "1,2", "3", "", "USR1@30"}, &r).ok());
  EXPECT_EQ(r.time_limit_s, 86400);
  EXPECT_EQ(r.after, (std::vector<JobId>{1, 2}));
  EXPECT_EQ(r.afterok, (std::vector<JobId>{3}));
  EXPECT_EQ(r.signal, SIGUSR1);
  EXPECT_EQ(r.signal_before_s, 30);
  JobRequest untouched;
  ASSERT_TRUE(ApplySubmitSched({}, &untouched).ok());
  EXPECT_EQ(untouched, JobRequest{});
}

// A job named twice is one dependency: "waits for job 5 (and 1 more job)" counted it twice.
TEST(ApplySubmitSchedTest, AJobNamedTwiceIsOneDependency) {
  SubmitSchedArgs args;
  args.afterok = "5,5,7";
  args.dependency = "afterok:7:8,afterany:3:3";
  JobRequest r;
  ASSERT_TRUE(ApplySubmitSched(args, &r).ok());
  EXPECT_EQ(r.afterok, (std::vector<JobId>{5, 7, 8}));
  EXPECT_EQ(r.after, (std::vector<JobId>{3}));
}

TEST(ApplySubmitSchedTest, BadTimesAreRefusedNamingTheOption) {
  JobRequest r;
  Status bad = ApplySubmitSched({"5x", "", "", "", ""}, &r);
  EXPECT_EQ(bad.code(), Code::kInvalidArgument);
  EXPECT_EQ(bad.message().rfind("--time: invalid time limit '5x'", 0), 0u) << bad.message();
  Status zero = ApplySubmitSched({"0", "", "", "", ""}, &r);
  EXPECT_EQ(zero.message(), "--time must be more than 0; leave it out for the node's default");
  EXPECT_EQ(ApplySubmitSched({"", "abc", "", "", ""}, &r).message().rfind("--after: 'abc'", 0), 0u);
}

// Slurm's --dependency, as far as it means --afterok and --after.
TEST(ApplyDependencyTest, AfterokAndAfteranyAreAfterokAndAfter) {
  std::vector<JobId> after, afterok;
  ASSERT_TRUE(ApplyDependency("afterok:3:4,afterany:7", &after, &afterok).ok());
  EXPECT_EQ(afterok, (std::vector<JobId>{3, 4}));
  EXPECT_EQ(after, (std::vector<JobId>{7}));
  JobRequest r;
  SubmitSchedArgs args;
  args.afterok = "1";
  args.dependency = "afterok:2";
  ASSERT_TRUE(ApplySubmitSched(args, &r).ok());
  EXPECT_EQ(r.afterok, (std::vector<JobId>{1, 2})) << "added to --afterok's";
}

TEST(ApplyDependencyTest, WhatMeansSomethingElseIsRefusedWithWhatToUse) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"after:3",
       "--dependency: after (start once they have started) is not supported here; afterany waits"},
      {"afternotok:3",
       "--dependency: 'afternotok' is not supported here; afterok:ID[:ID...] (--afterok)"},
      {"singleton", "--dependency: 'singleton' is not supported here"},
      {"afterok:3?afterany:4", "--dependency: '?' (any one of them) is not supported here"},
      {"afterok", "--dependency: afterok needs job ids (afterok:ID[:ID...])"},
      {"afterok:", "--dependency: afterok needs job ids"},
      {"afterok:3,", "--dependency: '' is not supported here"},
      {"afterok:3_1", "--dependency: '3_1' is not a job id"},
      {"afterok:3::4", "--dependency: '' is not a job id"},
      {"\x1b[2J:3", "--dependency: '\\x1b[2J' is not supported here"},
  };
  for (const auto& c : cases) {
    std::vector<JobId> after, afterok;
    Status s = ApplyDependency(c.text, &after, &afterok);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << c.text;
    EXPECT_EQ(s.message().rfind(c.message, 0), 0u) << c.text << ": " << s.message();
  }
}

TEST(ApplySignalTest, SlurmsSpellingsWithTheDefaultOf60Seconds) {
  struct Case {
    const char* text;
    int signal;
    int64_t before_s;
    bool leader_only;
  };
  for (const Case& c : {Case{"USR1@120", SIGUSR1, 120, false}, Case{"SIGUSR2", SIGUSR2, 60, false},
                        Case{"B:TERM@0", SIGTERM, 0, true}, Case{"10@65535", 10, 65535, false},
                        Case{"B:SIGINT", SIGINT, 60, true}, Case{"64", 64, 60, false}}) {
    JobRequest r;
    ASSERT_TRUE(ApplySignal(c.text, &r).ok()) << c.text;
    EXPECT_EQ(r.signal, c.signal) << c.text;
    EXPECT_EQ(r.signal_before_s, c.before_s) << c.text;
    EXPECT_EQ(r.signal_leader_only, c.leader_only) << c.text;
    EXPECT_TRUE(ValidateRequest(r).message().find("signal") == std::string::npos) << c.text;
  }
}

TEST(ApplySignalTest, WhatIsNoSignalOrNoTimeIsRefusedWithOneLine) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"", "--signal: expected [B:]SIG[@SECONDS]"},
      {"B:", "--signal: expected [B:]SIG[@SECONDS]"},
      {"@60", "--signal: expected [B:]SIG[@SECONDS]"},
      {"USR9", "--signal: 'USR9' is not a signal"},
      {"0", "--signal: '0' is not a signal"},
      {"65", "--signal: '65' is not a signal"},
      {"-1", "--signal: '-1' is not a signal"},
      {"USR1@", "--signal: '' is not a time in seconds (0 to 65535)"},
      {"USR1@65536", "--signal: '65536' is not a time in seconds"},
      {"USR1@1m", "--signal: '1m' is not a time in seconds"},
      {"USR1@99999999999999999999", "--signal: '99999999999999999999' is not a time in seconds"},
      {"R:USR1@60", "--signal: R: (requeue the job when the signal is sent) is not supported here"},
      {"\x1b[2J", "--signal: '\\x1b[2J' is not a signal"},
  };
  for (const auto& c : cases) {
    JobRequest r;
    Status s = ApplySignal(c.text, &r);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << c.text;
    EXPECT_EQ(s.message().rfind(c.message, 0), 0u) << c.text << ": " << s.message();
    EXPECT_EQ(r.signal, 0) << "nothing set: " << c.text;
  }
}

// Slurm takes an array task as a dependency (--afterok 12_2): it becomes that task's job id,
// asked of the daemon only for a task; no such task is one line naming the option and the task.
TEST(ResolveTaskDependenciesTest, ATaskBecomesItsJobId) {
  SubmitSchedArgs args;
  args.afterok = "12_2,7";
  args.after = "5";
  args.dependency = "afterok:12_3:8,afterany:12_2";
  int asked = 0;
  auto resolve = [&](JobId array, int index) -> Result<JobId> {
    ++asked;
    if (index > 3) return Status(Code::kNotFound, "array 12 has no task " + std::to_string(index));
    return array + 100 + index;
  };
  ASSERT_TRUE(ResolveTaskDependencies(&args, resolve).ok());
  EXPECT_EQ(args.afterok, "114,7");
  EXPECT_EQ(args.after, "5");
  EXPECT_EQ(args.dependency, "afterok:115:8,afterany:114");
  EXPECT_EQ(asked, 3);
  JobRequest r;
  ASSERT_TRUE(ApplySubmitSched(args, &r).ok());
  EXPECT_EQ(r.afterok, (std::vector<JobId>{114, 7, 115, 8}));
  args.afterok = "12_9";
  Status bad = ResolveTaskDependencies(&args, resolve);
  EXPECT_EQ(bad.message(), "--afterok 12_9: array 12 has no task 9");
  // A request's worth of tasks at most: each costs the daemon requests.
  std::string many;
  for (size_t i = 0; i <= kMaxDependencies; ++i)
    many += (many.empty() ? "" : ",") + std::string("12_1");
  args.afterok = many;
  asked = 0;
  EXPECT_EQ(ResolveTaskDependencies(&args, resolve).code(), Code::kInvalidArgument);
  EXPECT_EQ(asked, 0);
}

}  // namespace
}  // namespace pinpoint::cli
