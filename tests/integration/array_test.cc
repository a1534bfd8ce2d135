// Job arrays from the command line against a real pinpointd on a simulated node: one submit
// stores the tasks, each runs with its index in its environment and writes its own output file,
// `wait` and `submit --wait` wait for every task, `cancel` takes the array's id or ARRAY_INDEX,
// and a bad spec is one line and exit 2 with nothing stored.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "integration/harness.h"
#include "pinpoint/client.h"
#include "pinpoint/rewrite_budget.h"

namespace pinpoint::testing {
namespace {

using nlohmann::json;

class ArrayCliTest : public ::testing::Test {
 protected:
  void SetUp() override { h_.StartDaemon(); }
  size_t JobsStored() { return json::parse(h_.Cli({"--json", "queue", "--all"}).out).size(); }
  Harness h_{"simulated:h100x2", "\"cancel_grace_ms\": 2000"};
};

TEST_F(ArrayCliTest, EachTaskRunsWithItsIndexAndWritesItsOwnFile) {
  std::string pattern = h_.dir() + "/out-%A_%a.txt";
  auto sub =
      h_.Cli({"submit", "--array", "1-4%2", "--name", "sweep", "-o", pattern, "--", "sh", "-c",
              "echo \"task=$PINPOINT_ARRAY_TASK_ID of $PINPOINT_ARRAY_TASK_COUNT "
              "($PINPOINT_ARRAY_TASK_MIN-$PINPOINT_ARRAY_TASK_MAX) array=$PINPOINT_ARRAY_JOB_ID "
              "job=$PINPOINT_JOB_ID\""});
  ASSERT_EQ(sub.exit_code, 0) << sub.err;
  EXPECT_EQ(sub.out, "submitted array 1 (4 tasks: jobs 1 to 4)\n");
  auto wait = h_.Cli({"wait", "1"});
  EXPECT_EQ(wait.exit_code, 0) << wait.err;
  EXPECT_EQ(wait.out, "array 1: 4 tasks, 4 completed\n");
  for (int index = 1; index <= 4; ++index) {
    std::string file = h_.dir() + "/out-1_" + std::to_string(index) + ".txt";
    EXPECT_EQ(Slurp(file), "task=" + std::to_string(index) +
                               " of 4 (1-4) array=1 job=" + std::to_string(index) + "\n")
        << file;
  }
  auto show = h_.Cli({"show", "3"});
  EXPECT_NE(show.out.find("  array:    1_3 (task 3 of array 1: 4 tasks, indices 1 to 4, at most 2 "
                          "running at once)\n"),
            std::string::npos)
      << show.out;
  json shown = json::parse(h_.Cli({"--json", "show", "3"}).out);
  EXPECT_EQ(shown["job"]["array"], (json{{"id", 1},
                                         {"index", 3},
                                         {"count", 4},
                                         {"min_index", 1},
                                         {"max_index", 4},
                                         {"limit", 2}}));
  auto queue = h_.Cli({"queue", "--all"});
  EXPECT_EQ(queue.out.rfind("ID  ARRAY  USER", 0), 0u) << queue.out;
  EXPECT_NE(queue.out.find("\n2   1_2    "), std::string::npos) << queue.out;
}

// Slurm takes a task as a dependency (--afterok 12_2): it is that task's job id; a task that does
// not exist is one line and nothing is stored. An array of one task says "1 task: job N".
TEST_F(ArrayCliTest, ATaskIsADependencyByItsJobId) {
  auto sub = h_.Cli({"submit", "--hold", "--array", "4-6", "--", "true"});
  ASSERT_EQ(sub.exit_code, 0) << sub.err;
  auto after = h_.Cli(
      {"--json", "submit", "--hold", "--afterok", "1_5", "-d", "afterany:1_6", "--", "true"});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  json job = json::parse(after.out);
  EXPECT_EQ(job["request"]["afterok"], json({2}));
  EXPECT_EQ(job["request"]["after"], json({3}));
  auto none = h_.Cli({"submit", "--afterok", "1_9", "--", "true"});
  EXPECT_EQ(none.exit_code, 4) << none.err;
  EXPECT_EQ(none.err.rfind("pinpoint: --afterok 1_9: ", 0), 0u) << none.err;
  EXPECT_EQ(std::count(none.err.begin(), none.err.end(), '\n'), 1) << none.err;
  EXPECT_EQ(JobsStored(), 2u) << "the array's pending tasks (one row) and the job";
  auto one = h_.Cli({"submit", "--hold", "-a", "7", "--", "true"});
  EXPECT_EQ(one.out, "submitted array 5 (1 task: job 5) (held)\n") << one.err;
}

TEST_F(ArrayCliTest, BadSpecsAreOneLineAndStoreNothing) {
  struct Case {
    const char* spec;
    const char* says;
  } cases[] = {
      {"5-1", "pinpoint: invalid array '5-1': range 5-1 ends before it starts\n"},
      {"1-", "pinpoint: invalid array '1-': range '1-' has no end\n"},
      {"a",
       "pinpoint: invalid array 'a': 'a' is not an index (e.g. 1-100, 0-15:4 or 1,3,5-7, and %K to "
       "run at most K at once)\n"},
      {"1-4%0", "pinpoint: invalid array '1-4%0': %0 would run no task; K is at least 1\n"},
      {"99999999999999999999",
       "pinpoint: invalid array '99999999999999999999': index 99999999999999999999 is above "
       "999999, the largest\n"},
      {"0-99999",
       "pinpoint: invalid array '0-99999': more than 10000 tasks; an array has at most 10000\n"},
      {"",
       "pinpoint: invalid array '': give task indices, e.g. 1-100, 0-15:4 or 1,3,5-7, and %K to "
       "run at most K at once\n"},
  };
  for (const auto& c : cases) {
    auto r = h_.Cli({"submit", "--array", c.spec, "--", "true"});
    EXPECT_EQ(r.exit_code, 2) << c.spec;
    EXPECT_EQ(r.err, c.says);
    EXPECT_EQ(r.out, "");
  }
  EXPECT_EQ(JobsStored(), 0u);
}

TEST_F(ArrayCliTest, SubmitWaitWaitsForEveryTaskAndFailsWhenOneFails) {
  auto bad = h_.Cli({"submit", "--wait", "--array", "1-3", "--", "sh", "-c",
                     "exit $((PINPOINT_ARRAY_TASK_ID == 2 ? 5 : 0))"});
  EXPECT_EQ(bad.exit_code, 5) << bad.err;
  EXPECT_EQ(bad.err,
            "pinpoint: submitted array 1 (3 tasks: jobs 1 to 3), waiting (Ctrl-C cancels it)\n");
  EXPECT_EQ(bad.out,
            "array 1: 3 tasks, 2 completed, 1 failed\n  job 2 (1_2) failed (exit code 5)\n");
  auto good = h_.Cli({"submit", "--wait", "--array", "0-2", "--", "true"});
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_EQ(good.out, "array 4: 3 tasks, 3 completed\n");
  auto json_wait = h_.Cli({"--json", "submit", "--wait", "--array", "7", "--", "true"});
  ASSERT_EQ(json_wait.exit_code, 0) << json_wait.err;
  json tasks = json::parse(json_wait.out);
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0]["array"]["index"], 7);
  EXPECT_EQ(tasks[0]["state"], "completed");
}

TEST_F(ArrayCliTest, CancelTakesTheArraysIdOrOneTask) {
  auto sub = h_.Cli({"submit", "--array", "1-4", "--", "sleep", "1000"});
  ASSERT_EQ(sub.exit_code, 0) << sub.err;
  auto one = h_.Cli({"cancel", "1_2"});
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out, "cancelled job 2\n");
  h_.Cli({"wait", "2"});  // ended: the array's cancel below reaches the other three
  auto none = h_.Cli({"cancel", "1_9"});
  EXPECT_EQ(none.exit_code, 4);
  EXPECT_EQ(none.err, "pinpoint: array 1 has no task 9\n");
  auto typo = h_.Cli({"cancel", "1_x"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_EQ(typo.err,
            "pinpoint cancel: '1_x' is not a job id (job ids are whole numbers from 1)\n");
  // An index above the largest reads as any other bad id: one grammar for the check and the cancel.
  auto big = h_.Cli({"cancel", "1_9999999"});
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_EQ(big.err,
            "pinpoint cancel: '1_9999999' is not a job id (job ids are whole numbers from 1)\n");
  auto all = h_.Cli({"cancel", "1"});
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(all.out, "cancelled array 1 (3 unfinished tasks)\n");
  auto wait = h_.Cli({"wait", "1"});
  EXPECT_EQ(wait.exit_code, 1);
  EXPECT_EQ(CountLines(wait.out), 5) << wait.out;
  EXPECT_EQ(wait.out.rfind("array 1: 4 tasks, 4 cancelled\n", 0), 0u) << wait.out;
  auto again = h_.Cli({"cancel", "1"});
  EXPECT_EQ(again.exit_code, 6);
  EXPECT_EQ(again.err, "pinpoint: array 1 already ended (all its tasks)\n");
}

// Slurm's names for tasks wherever jobs are named: hold, release, show, logs and wait take an
// array's id, ARRAY_INDEX and ARRAY_[LIST]; queue shows the pending tasks as one row.
TEST_F(ArrayCliTest, EveryCommandTakesArraysAndTasksAsSlurmNamesThem) {
  auto sub = h_.Cli({"submit", "--hold", "--array", "1-6%2", "--", "sh", "-c",
                     "echo task $PINPOINT_ARRAY_TASK_ID"});
  ASSERT_EQ(sub.exit_code, 0) << sub.err;
  auto queue = h_.Cli({"queue"});
  EXPECT_NE(queue.out.find("\n1   1_[1-6%2]  "), std::string::npos) << queue.out;
  EXPECT_EQ(CountLines(queue.out), 3)
      << "a header, one row for six held tasks, the simulated node's line\n"
      << queue.out;
  auto released = h_.Cli({"release", "1_[1-2]"});
  EXPECT_EQ(released.exit_code, 0) << released.err;
  EXPECT_EQ(released.out, "released job 1\nreleased job 2\n");
  auto wait = h_.Cli({"wait", "1_[1-2]"});
  EXPECT_EQ(wait.exit_code, 0) << wait.err;
  EXPECT_EQ(wait.out, "job 1 completed (exit code 0)\njob 2 completed (exit code 0)\n")
      << "the tasks, not the whole array";
  EXPECT_EQ(h_.Cli({"logs", "1_2"}).out, "task 2\n");
  auto two = h_.Cli({"logs", "1_[1-2]"});
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_EQ(CountLines(two.err), 1) << two.err;
  auto shown = h_.Cli({"show", "1_[2,3]"});
  EXPECT_EQ(shown.out.rfind("job 2\n", 0), 0u) << shown.out;
  EXPECT_NE(shown.out.find("\n\njob 3\n"), std::string::npos) << shown.out;
  EXPECT_EQ(json::parse(h_.Cli({"--json", "show", "1_[2,3]"}).out).size(), 2u);
  auto rest = h_.Cli({"release", "1"});
  EXPECT_EQ(rest.exit_code, 0) << rest.err;
  EXPECT_EQ(rest.out, "released array 1 (4 unfinished tasks)\n");
  auto all = h_.Cli({"wait", "1"});
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(all.out.rfind("array 1: 6 tasks, 6 completed\n", 0), 0u) << all.out;
  auto none = h_.Cli({"hold", "1"});
  EXPECT_EQ(none.exit_code, 6);
  EXPECT_EQ(none.err, "pinpoint: array 1 has no pending task\n");
  // An ended task is refused under the name the user typed, and exits 6 as an ended job does.
  auto ended = h_.Cli({"cancel", "1_3"});
  EXPECT_EQ(ended.exit_code, 6);
  EXPECT_EQ(ended.err, "pinpoint: 1_3: job 3 already ended (completed)\n");
  auto bad = h_.Cli({"hold", "1_[2-x]"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err,
            "pinpoint hold: '1_[2-x]' is not a job id (job ids are whole numbers from 1)\n");
}

TEST_F(ArrayCliTest, UpdateChangesTheLimitOfAWaitingArray) {
  auto sub = h_.Cli({"submit", "--array", "1-4%1", "--", "sleep", "1000"});
  ASSERT_EQ(sub.exit_code, 0) << sub.err;
  auto updated = h_.Cli({"update", "1", "--array-limit", "4"});
  EXPECT_EQ(updated.exit_code, 0) << updated.err;
  EXPECT_EQ(updated.out, "updated array 1 (4 unfinished tasks)\n");
  EXPECT_EQ(json::parse(h_.Cli({"--json", "show", "1_4"}).out)["job"]["array"]["limit"], 4);
  auto bad = h_.Cli({"update", "1", "--array-limit", "-1"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(CountLines(bad.err), 1) << bad.err;
  h_.Cli({"cancel", "1"});
}

// A list of indices is no range: ARRAY_INDEX is found among the tasks' ids.
TEST_F(ArrayCliTest, ATaskOfAListIsFoundByItsIndex) {
  auto sub = h_.Cli({"submit", "--hold", "--array", "1,5,9,20-22", "--", "true"});
  ASSERT_EQ(sub.exit_code, 0) << sub.err;
  EXPECT_EQ(sub.out, "submitted array 1 (6 tasks: jobs 1 to 6) (held)\n");
  for (const auto& [task, job] : std::vector<std::pair<std::string, std::string>>{
           {"1_9", "3"}, {"1_1", "1"}, {"1_22", "6"}, {"1_20", "4"}}) {
    auto r = h_.Cli({"cancel", task});
    EXPECT_EQ(r.out, "cancelled job " + job + "\n") << task << ": " << r.err;
  }
  EXPECT_EQ(h_.Cli({"cancel", "1_6"}).err, "pinpoint: array 1 has no task 6\n");
  EXPECT_EQ(h_.Cli({"cancel", "3_9"}).err, "pinpoint: job 3 is not a job array\n");
  // The two left are one row, the array's rest, under the id of the first of them.
  json jobs = json::parse(h_.Cli({"--json", "queue"}).out);
  ASSERT_EQ(jobs.size(), 1u) << jobs.dump();
  EXPECT_EQ(jobs[0]["id"], 2);
  EXPECT_EQ(jobs[0]["array"]["index"], 5);
  EXPECT_EQ(jobs[0]["array"]["pending"], "5,21");
  EXPECT_EQ(h_.Cli({"queue"}).out.find("1_[5,21]") != std::string::npos, true)
      << h_.Cli({"queue"}).out;
  EXPECT_EQ(json::parse(h_.Cli({"--json", "show", "1_21"}).out)["job"]["id"], 5);
}

// A request names at most 256 jobs and a listing's reply holds at most 256, so that each request
// costs pinpointd a bounded time (issue 22); the client splits longer lists and pages longer
// listings itself, and a raw request past the bound is one clear error.
TEST_F(ArrayCliTest, ManyIdsGoAsSeveralRequestsAndLongListingsAsPages) {
  ASSERT_EQ(h_.Cli({"submit", "--hold", "--array", "1-600", "--", "true"}).exit_code, 0);
  auto listed = h_.Cli({"--json", "queue", "--limit", "600"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  ASSERT_EQ(json::parse(listed.out).size(), 1u) << "the array waits as one record, its rest";
  // Each task named alone is taken out of the rest, a job of its own.
  std::vector<std::string> cancel = {"cancel"};  // the tasks but the first (its id is the array's)
  for (int id = 2; id <= 600; ++id) cancel.push_back(std::to_string(id));
  auto cancelled = h_.Cli(cancel);
  ASSERT_EQ(cancelled.exit_code, 0) << cancelled.err;
  EXPECT_EQ(CountLines(cancelled.out), 599) << cancelled.out.substr(0, 200);
  EXPECT_NE(cancelled.out.find("cancelled job 600\n"), std::string::npos);
  json all = json::parse(h_.Cli({"--json", "queue", "--all", "--limit", "600"}).out);
  ASSERT_EQ(all.size(), 600u);
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i]["id"], i + 1) << "ascending, each once";
  EXPECT_EQ(all[0]["state"], "pending");
  for (size_t i = 1; i < all.size(); ++i) EXPECT_EQ(all[i]["state"], "cancelled") << all[i]["id"];
  auto client = Client::Connect(h_.socket());
  ASSERT_TRUE(client.ok());
  auto raw = client->Call({{"op", "hold"}, {"ids", std::vector<JobId>(kCancelMaxIds + 1, 1)}});
  EXPECT_EQ(raw.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(raw.status().message(), "at most 64 ids at once");
  auto page = client->Call({{"op", "queue"}, {"all", true}, {"limit", 600}});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ((*page)["jobs"].size(), 256u) << "one page at a time";
  EXPECT_EQ((*page)["limit"], 256);
  EXPECT_EQ((*page)["more"], 600 - 256);
}

// Attack: a hold or release rewrites whole records, environments included; 64 jobs of 250 KB
// environments were 16 MB written by one request, and every other client waited half a second.
// Now one request rewrites about kRewriteBytesPerRequest and answers the rest "not reached"; the
// CLI sends those again, so a user's command still does all it names.
TEST_F(ArrayCliTest, ReleaseOfJobsWithLargeEnvironmentsGoesInBoundedRequests) {
  // Two variables: one string of the environment may not pass 128 KiB (MAX_ARG_STRLEN).
  ::setenv("PP_TEST_BIG1", std::string(100000, 'x').c_str(), 1);
  ::setenv("PP_TEST_BIG2", std::string(100000, 'y').c_str(), 1);
  // They wait for a held job once released, so that they are still there to release again.
  auto blocker = h_.Cli({"--json", "submit", "--hold", "--", "true"});
  ASSERT_EQ(blocker.exit_code, 0) << blocker.err;
  std::string after = std::to_string(json::parse(blocker.out)["id"].get<JobId>());
  auto submitted =
      h_.Cli({"--json", "submit", "--hold", "--after", after, "--array", "1-12", "--", "true"});
  ::unsetenv("PP_TEST_BIG1");
  ::unsetenv("PP_TEST_BIG2");
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  JobId array = json::parse(submitted.out)["array"]["id"];
  std::vector<JobId> ids;
  for (JobId id = array; id < array + 12; ++id) ids.push_back(id);
  auto client = Client::Connect(h_.socket());
  ASSERT_TRUE(client.ok());
  auto raw = client->Call({{"op", "release"}, {"ids", ids}});
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  const json& results = (*raw)["results"];
  ASSERT_EQ(results.size(), 12u) << raw->dump().substr(0, 300);
  size_t done = 0;
  while (done < results.size() && results[done]["ok"] == true) ++done;
  EXPECT_GE(done, 1u) << "at least one job each request";
  EXPECT_LE(done, 6u) << "about a mebibyte of records: five of 200 KB";
  for (size_t i = done; i < results.size(); ++i) {
    EXPECT_EQ(results[i]["ok"], false);
    EXPECT_EQ(results[i]["error"]["message"], kNotReachedMessage) << results[i].dump();
  }
  EXPECT_NE(json::parse(h_.Cli({"--json", "show", std::to_string(ids.back())}).out)["job"].value(
                "hold", ""),
            "")
      << "an id not reached is left as it was: held";
  std::vector<std::string> release = {"release"};
  for (JobId id : ids) release.push_back(std::to_string(id));
  auto released = h_.Cli(release);
  ASSERT_EQ(released.exit_code, 0) << released.err;
  for (JobId id : ids)
    EXPECT_EQ(
        json::parse(h_.Cli({"--json", "show", std::to_string(id)}).out)["job"].value("hold", ""),
        "")
        << "job " << id << " is released";
}

}  // namespace
}  // namespace pinpoint::testing
