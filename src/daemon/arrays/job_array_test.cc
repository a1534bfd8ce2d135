// Job arrays in the daemon, through the wire op and the Node on fakes: %K, each task's environment
// and files, requests on the array's id, the bounds. Its rest: array_rest_node_test.cc.
#include "daemon/arrays/job_array.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>

#include "daemon/service/service_fixture.h"
#include "pinpoint/api_codec.h"
#include "store/faulty_vfs.h"

namespace pinpoint::daemon {
namespace {

using nlohmann::json;

class JobArrayTest : public ServiceFixture {
 protected:
  void SetUp() override { Restart(Options()); }
  static NodeOptions Options() {
    NodeOptions o;
    o.inventory = TwoGpus();
    return o;
  }
  static JobRequest Slice() { return GpuSlice("/home/alice"); }
  json Handle(const json& op, const api::Caller& caller) {
    std::optional<json> reply = service_->Handle(caller, op, /*conn=*/1);
    return reply ? *reply : json{{"deferred", true}};
  }
  json SubmitOp(const std::string& spec, JobRequest r = Slice()) {
    return json{{"op", "submit"}, {"request", ToJson(r)}, {"array", spec}};
  }
  // Submits an array through the wire and returns its id (its first task's job id).
  JobId SubmitArray(const std::string& spec, JobRequest r = Slice()) {
    json reply = Handle(SubmitOp(spec, std::move(r)), caller_);
    EXPECT_EQ(reply.value("ok", false), true) << reply.dump();
    return reply.contains("array") ? reply["array"].value("id", JobId{0}) : 0;
  }
  JobRecord Get(JobId id) { return node_->Get(id).value(); }
  // Names each of the array's `count` tasks alone (an update of its name): each is taken out of
  // the array's rest (array_rest.h), a record of its own, as a started task is.
  void TakeOutEveryTask(JobId array_id, int count) {
    std::vector<JobId> ids;
    for (JobId id = array_id; id < array_id + count; ++id) ids.push_back(id);
    JobEdit edit;
    edit.name = "taken-out";
    for (const Status& s : node_->UpdateJobs(caller_, ids, edit, 0))
      ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_EQ(store_->List({})->size(),
              static_cast<size_t>(count) + (store_->Get(array_id - 1).ok() ? 1 : 0));
  }
  int RunningTasks(JobId array_id, int count) {
    int running = 0;
    for (JobId id = array_id; id < array_id + count; ++id)
      running += Get(id).state == JobState::kRunning;
    return running;
  }
  static std::map<std::string, std::string> EnvOf(const launch::LaunchSpec& spec) {
    std::map<std::string, std::string> env;
    for (const auto& kv : spec.env) env[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
    return env;
  }
  void Exit(JobId id, int code) {
    launch::ExitStatus exited;
    exited.kind = launch::ExitStatus::Kind::kExited;
    exited.exit_code = code;
    launcher_.Finish(id, exited);
  }
};

// The array is one record, its rest (array_rest.h), whose tasks keep consecutive ids.
TEST_F(JobArrayTest, OneSubmitStoresOneRecordAndEveryTaskHasItsConsecutiveId) {
  ASSERT_TRUE(node_->Submit(caller_, Slice()).ok());  // job 1: the array's ids come after it
  json reply = Handle(SubmitOp("1,3,5-7"), caller_);
  ASSERT_EQ(reply.value("ok", false), true) << reply.dump();
  EXPECT_EQ(reply["array"],
            (json{{"id", 2}, {"count", 5}, {"first_job_id", 2}, {"last_job_id", 6}}));
  EXPECT_EQ(reply["job"]["id"], 2);
  EXPECT_EQ(reply["job"]["array"], (json{{"id", 2},
                                         {"index", 1},
                                         {"count", 5},
                                         {"min_index", 1},
                                         {"max_index", 7},
                                         {"limit", 0}}));
  const int indices[] = {1, 3, 5, 6, 7};
  EXPECT_EQ(store_->Get(2).value().array.pending, "1-5:2,6-7") << "stored, not only in memory";
  for (int i = 0; i < 5; ++i) {
    JobRecord task = Get(2 + i);
    EXPECT_EQ(task.state, JobState::kPending);
    EXPECT_EQ(task.array, (ArrayTask{2, indices[i], 5, 1, 7, 0}));
    EXPECT_EQ(task.request, Get(2).request);
    EXPECT_EQ(node_->Events(2 + i)->front().kind, "submit");
  }
  EXPECT_EQ(store_->List({})->size(), 2u);
  EXPECT_EQ(node_->Submit(caller_, Slice())->id, 7) << "the next job follows the array";
}

TEST_F(JobArrayTest, AtMostKTasksRunAndTheOthersSayWhy) {
  JobId array = SubmitArray("0-5%2");
  node_->Step();
  EXPECT_EQ(launcher_.launches().size(), 2u);
  EXPECT_EQ(RunningTasks(array, 6), 2);
  JobRecord waiting = Get(array + 2);
  EXPECT_EQ(waiting.reason, Reason::kArrayLimit);
  EXPECT_EQ(waiting.detail, "array " + std::to_string(array) + " runs 2 tasks, its limit (%2)");
  // Each end lets one more start, never more than two at once.
  for (int round = 0; round < 4; ++round) {
    Exit(launcher_.Running().front(), 0);
    node_->Step();
    EXPECT_EQ(RunningTasks(array, 6), 2) << "round " << round;
  }
  EXPECT_EQ(launcher_.launches().size(), 6u);
  // Another job of the same user is not held back by the array's limit.
  JobId other = node_->Submit(caller_, Slice())->id;
  node_->Step();
  EXPECT_EQ(Get(other).state, JobState::kRunning);
}

// Slurm's semantics: --afterok ARRAY waits for every task of the array, not only its first (whose
// id the array's is); one task that fails means it never starts. --after waits for all to end.
TEST_F(JobArrayTest, AfterokOnAnArraysIdWaitsForEveryTask) {
  JobId array = SubmitArray("0-2%1");  // one task at a time: the first ends while others wait
  JobRequest next = Slice();
  next.afterok = {array};
  JobId after_ok = node_->Submit(caller_, next)->id;
  next.afterok.clear();
  next.after = {array};
  JobId after_any = node_->Submit(caller_, next)->id;
  node_->Step();
  Exit(array, 0);
  node_->Step();
  ASSERT_EQ(Get(array).state, JobState::kCompleted);
  EXPECT_EQ(Get(after_ok).state, JobState::kPending) << "tasks 1 and 2 have not run yet";
  EXPECT_EQ(Get(after_ok).reason, Reason::kDependency);
  EXPECT_EQ(Get(after_any).state, JobState::kPending);
  Exit(array + 1, 0);
  node_->Step();
  EXPECT_EQ(Get(after_ok).state, JobState::kPending);
  Exit(array + 2, 3);  // the last task fails
  node_->Step();
  EXPECT_EQ(Get(after_ok).state, JobState::kCancelled);
  EXPECT_EQ(Get(after_ok).reason, Reason::kDependencyNeverSatisfied);
  EXPECT_EQ(Get(after_any).state, JobState::kRunning) << "--after: every task has ended";

  // Once every task has ended and one failed, afterok on the array can never be met: refused at
  // submit, as Slurm refuses it. A task that completed still names itself.
  next.after.clear();
  next.afterok = {array};
  auto refused = node_->Submit(caller_, next);
  EXPECT_EQ(refused.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(refused.status().message(),
            "job array " + std::to_string(array) +
                " has already ended failed: afterok on it can never be met "
                "(after waits for any end)");
  next.afterok = {array + 1};
  EXPECT_TRUE(node_->Submit(caller_, next).ok());
}

TEST_F(JobArrayTest, AfterokOnAnArrayThatAllCompletedStartsAndATasksOwnIdIsThatTask) {
  JobId array = SubmitArray("1-2");
  node_->Step();
  Exit(array, 0);
  node_->Step();
  JobRequest next = Slice();
  next.afterok = {array + 1};  // the second task alone
  JobId on_task = node_->Submit(caller_, next)->id;
  next.afterok = {array};
  JobId on_array = node_->Submit(caller_, next)->id;
  node_->Step();
  EXPECT_EQ(Get(on_task).state, JobState::kPending);
  Exit(array + 1, 0);
  node_->Step();
  EXPECT_EQ(Get(on_task).state, JobState::kRunning);
  EXPECT_EQ(Get(on_array).state, JobState::kRunning) << "every task completed";
  Restart(Options());  // and from the store alone, after a restart
  JobId later = node_->Submit(caller_, next)->id;
  node_->Step();
  EXPECT_EQ(Get(later).state, JobState::kRunning);
}

// hold and release of an array's id reach its pending tasks, one result for the array; its
// running tasks are passed over; another user's array is refused whole.
TEST_F(JobArrayTest, HoldAndReleaseOfAnArraysIdReachItsPendingTasks) {
  JobId array = SubmitArray("1-5%2");
  node_->Step();
  ASSERT_EQ(RunningTasks(array, 5), 2);
  json held = Handle(json{{"op", "hold"}, {"arrays", {array}}}, caller_);
  ASSERT_EQ(held.value("ok", false), true) << held.dump();
  EXPECT_EQ(held["results"], (json::array({{{"id", array}, {"ok", true}, {"array_tasks", 3}}})));
  for (JobId id = array + 2; id < array + 5; ++id) EXPECT_EQ(Get(id).hold, Hold::kUser) << id;
  EXPECT_EQ(Get(array).hold, Hold::kNone) << "a running task is passed over";
  api::Caller other;
  other.uid = 5555;
  other.gid = 5555;
  json refused = Handle(json{{"op", "release"}, {"arrays", {array}}}, other);
  EXPECT_EQ(refused["results"][0]["error"]["code"], "permission_denied") << refused.dump();
  json released =
      Handle(json{{"op", "release"}, {"ids", {array + 4}}, {"arrays", {array}}}, caller_);
  ASSERT_EQ(released["results"].size(), 2u) << released.dump();
  EXPECT_EQ(released["results"][0], (json{{"id", array + 4}, {"ok", true}}));
  EXPECT_EQ(released["results"][1]["array_tasks"], 2)
      << "the task released by its id first is not counted again";
  for (JobId id = array + 2; id < array + 5; ++id) EXPECT_EQ(Get(id).hold, Hold::kNone) << id;
  Handle(json{{"op", "cancel"}, {"arrays", {array}}}, caller_);
  node_->Step();
  json none = Handle(json{{"op", "hold"}, {"arrays", {array}}}, caller_);
  EXPECT_EQ(none["results"][0]["error"]["message"],
            "array " + std::to_string(array) + " has no pending task")
      << none.dump();
}

// Attack on the loop: a cancel (hold, release) of a large array's id rewrites one request's
// budget of records per pass of the main loop, the reply deferred until the last; meanwhile
// other requests are served. The result is the whole array's.
TEST_F(JobArrayTest, ALargeArraysCancelGoesOneBudgetAPassAndAnswersOnce) {
  CollectReplies();
  JobRequest big = Slice();
  big.env["BLOB"] = std::string(100 << 10, 'x');  // ~100 KiB a record: ten fill a budget
  JobId array = SubmitArray("1-40", big);
  TakeOutEveryTask(array, 40);
  JobId victim = node_->Submit(caller_, Slice())->id;
  std::optional<json> now =
      service_->Handle(caller_, json{{"op", "hold"}, {"arrays", {array}}}, /*conn=*/7);
  EXPECT_FALSE(now.has_value()) << "deferred: " << now->dump();
  int held_first = 0;
  for (JobId id = array; id < array + 40; ++id) held_first += Get(id).hold != Hold::kNone;
  EXPECT_GT(held_first, 0);
  EXPECT_LT(held_first, 40) << "the first call did one budget's worth, not the whole array";
  EXPECT_EQ(Handle(json{{"op", "show"}, {"id", victim}}, caller_).value("ok", false), true)
      << "others are served";
  int passes = 0;
  while (service_->waiting().array_requests > 0 && passes < 100) {
    service_->ContinueArrayWork();
    ++passes;
  }
  EXPECT_GT(passes, 1);
  ASSERT_EQ(replies_.size(), 1u);
  EXPECT_EQ(replies_[0].first, 7u);
  EXPECT_EQ(replies_[0].second["results"],
            (json::array({{{"id", array}, {"ok", true}, {"array_tasks", 40}}})))
      << replies_[0].second.dump();
  for (JobId id = array; id < array + 40; ++id) EXPECT_EQ(Get(id).hold, Hold::kUser) << id;
}

// Small records cost per record: a pass changes at most as many tasks as a request of ids names.
TEST_F(JobArrayTest, APassChangesAtMostARequestsWorthOfSmallTasks) {
  CollectReplies();
  JobId array = SubmitArray("1-100");
  TakeOutEveryTask(array, 100);
  EXPECT_FALSE(
      service_->Handle(caller_, json{{"op", "hold"}, {"arrays", {array}}}, /*conn=*/3).has_value());
  int held = 0;
  for (JobId id = array; id < array + 100; ++id) held += Get(id).hold != Hold::kNone;
  EXPECT_EQ(held, static_cast<int>(kCancelMaxIds));
  while (service_->waiting().array_requests > 0) service_->ContinueArrayWork();
  ASSERT_EQ(replies_.size(), 1u);
  EXPECT_EQ(replies_[0].second["results"][0]["array_tasks"], 100);
}

// Slurm's ArrayTaskThrottle: the %K of a waiting array changes; raised, more tasks start at the
// next pass; lowered, no more start until fewer run. Its owner or root only.
TEST_F(JobArrayTest, TheLimitOfAWaitingArrayCanBeChanged) {
  JobId array = SubmitArray("1-6%1");
  node_->Step();
  ASSERT_EQ(RunningTasks(array, 6), 1);
  json raised = Handle(json{{"op", "update_array"}, {"arrays", {array}}, {"limit", 3}}, caller_);
  ASSERT_EQ(raised.value("ok", false), true) << raised.dump();
  EXPECT_EQ(raised["results"], (json::array({{{"id", array}, {"ok", true}, {"array_tasks", 6}}})));
  node_->Step();
  EXPECT_EQ(RunningTasks(array, 6), 3);
  EXPECT_EQ(Get(array + 5).array.limit, 3);
  EXPECT_EQ(store_->FindArrayRest(array + 5)->value().array.limit, 3)
      << "stored, in the array's rest";
  api::Caller other;
  other.uid = 5555;
  other.gid = 5555;
  json refused = Handle(json{{"op", "update_array"}, {"arrays", {array}}, {"limit", 0}}, other);
  EXPECT_EQ(refused["results"][0]["error"]["code"], "permission_denied") << refused.dump();
  Handle(json{{"op", "update_array"}, {"arrays", {array}}, {"limit", 1}}, caller_);
  for (int i = 0; i < 3; ++i) Exit(launcher_.Running().front(), 0);
  node_->Step();
  EXPECT_EQ(RunningTasks(array, 6), 1) << "lowered: one at a time again";
  EXPECT_EQ(Get(array + 4).reason, Reason::kArrayLimit);
}

TEST_F(JobArrayTest, TheLimitHoldsAcrossARestart) {
  JobId array = SubmitArray("1-4%1");
  node_->Step();
  ASSERT_EQ(RunningTasks(array, 4), 1);
  Restart(Options());  // the running task is adopted; the limit is in the stored records
  node_->Step();
  EXPECT_EQ(RunningTasks(array, 4), 1);
  EXPECT_EQ(Get(array + 1).reason, Reason::kArrayLimit);
}

TEST_F(JobArrayTest, EachTaskGetsItsArrayInItsEnvironmentAndOutputFile) {
  JobRequest r = Slice();
  r.output_path = "out/%A_%a.log";
  r.env = {{"PINPOINT_ARRAY_TASK_ID", "99"}, {"PATH", "/bin"}};  // inherited from another task
  JobId array = SubmitArray("4-5", r);
  node_->Step();
  ASSERT_EQ(launcher_.launches().size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const launch::LaunchSpec& spec = launcher_.launches()[i];
    ASSERT_EQ(spec.job_id, array + i);
    auto env = EnvOf(spec);
    EXPECT_EQ(env["PINPOINT_JOB_ID"], std::to_string(array + i));
    EXPECT_EQ(env["PINPOINT_ARRAY_JOB_ID"], std::to_string(array));
    EXPECT_EQ(env["PINPOINT_ARRAY_TASK_ID"], std::to_string(4 + i));
    EXPECT_EQ(env["PINPOINT_ARRAY_TASK_COUNT"], "2");
    EXPECT_EQ(env["PINPOINT_ARRAY_TASK_MIN"], "4");
    EXPECT_EQ(env["PINPOINT_ARRAY_TASK_MAX"], "5");
    EXPECT_EQ(spec.stdout_path,
              "/home/alice/out/" + std::to_string(array) + "_" + std::to_string(4 + i) + ".log");
  }
  // A job that is not a task never sees array variables, whatever its environment brought.
  auto plain = node_->Submit(caller_, r);
  node_->Step();
  ASSERT_EQ(launcher_.launches().size(), 3u);
  auto env = EnvOf(launcher_.launches()[2]);
  EXPECT_EQ(env.count("PINPOINT_ARRAY_TASK_ID"), 0u);
  EXPECT_EQ(env.count("PINPOINT_ARRAY_JOB_ID"), 0u);
  EXPECT_EQ(launcher_.launches()[2].stdout_path,
            "/home/alice/out/" + std::to_string(plain->id) + "_0.log");
}

TEST_F(JobArrayTest, CancelOfTheArraysIdReachesEveryUnfinishedTask) {
  JobId array = SubmitArray("1-4%2");
  node_->Step();
  Exit(array, 0);  // task 1 completes
  node_->Step();   // task 3 starts: 2 and 3 run, 4 waits
  ASSERT_EQ(Get(array + 2).state, JobState::kRunning);

  api::Caller other = caller_;
  other.uid = 4343;
  json refused = Handle({{"op", "cancel"}, {"arrays", {array}}}, other);
  EXPECT_EQ(refused["results"][0]["error"]["code"], "permission_denied") << refused.dump();
  EXPECT_FALSE(Get(array + 3).cancel_requested || IsFinal(Get(array + 3).state));

  json reply = Handle({{"op", "cancel"}, {"arrays", {array}}}, caller_);
  EXPECT_EQ(reply["results"], (json::array({{{"id", array}, {"ok", true}, {"array_tasks", 3}}})))
      << reply.dump();
  EXPECT_TRUE(Get(array + 1).cancel_requested);
  EXPECT_TRUE(Get(array + 2).cancel_requested);
  EXPECT_EQ(Get(array + 3).state, JobState::kCancelled);
  EXPECT_EQ(Get(array).state, JobState::kCompleted) << "an ended task stays as it ended";
  std::vector<JobId> signalled;
  for (const auto& [id, sig] : launcher_.signals()) signalled.push_back(id);
  EXPECT_NE(std::find(signalled.begin(), signalled.end(), array + 1), signalled.end());
  EXPECT_NE(std::find(signalled.begin(), signalled.end(), array + 2), signalled.end());

  launcher_.FinishAll(143);
  node_->Step();
  json again = Handle({{"op", "cancel"}, {"arrays", {array}}}, caller_);
  EXPECT_EQ(again["results"][0]["error"]["message"],
            "array " + std::to_string(array) + " already ended (all its tasks)");
}

// "ids" keep their meaning: each is one job, the array's first task too. In "arrays" an id that
// names no array is one job as well.
TEST_F(JobArrayTest, CancelOfATasksOwnIdReachesThatTaskOnly) {
  JobId array = SubmitArray("1-4");
  json reply =
      Handle({{"op", "cancel"}, {"ids", {array, array + 1}}, {"arrays", {array + 2}}}, caller_);
  EXPECT_EQ(reply["results"], (json::array({{{"id", array}, {"ok", true}},
                                            {{"id", array + 1}, {"ok", true}},
                                            {{"id", array + 2}, {"ok", true}}})));
  EXPECT_EQ(Get(array).state, JobState::kCancelled);
  EXPECT_EQ(Get(array + 1).state, JobState::kCancelled);
  EXPECT_EQ(Get(array + 2).state, JobState::kCancelled);
  EXPECT_EQ(Get(array + 3).state, JobState::kPending);
  json missing = Handle({{"op", "cancel"}, {"arrays", {999}}}, caller_);
  EXPECT_EQ(missing["results"][0]["error"]["message"], "no job 999");
}

TEST_F(JobArrayTest, HeldArrayHoldsEveryTask) {
  json op = SubmitOp("1-3");
  op["hold"] = true;
  json reply = Handle(op, caller_);
  JobId array = reply["array"]["id"];
  node_->Step();
  EXPECT_TRUE(launcher_.launches().empty());
  for (JobId id = array; id < array + 3; ++id) EXPECT_EQ(Get(id).reason, Reason::kHeld);
}

TEST_F(JobArrayTest, BadArraysAreRefusedAndNothingIsStored) {
  struct Case {
    json array;
    const char* code;
    const char* says;
  };
  const Case cases[] = {
      {"5-1", "invalid_argument", "invalid array '5-1': range 5-1 ends before it starts"},
      {"1-10%0", "invalid_argument", "%0 would run no task"},
      {"0-10000", "invalid_argument", "more than 10000 tasks"},
      {5, "invalid_argument", "\"array\" must be task indices as text"},
      {"", "invalid_argument", "give task indices"},
  };
  for (const Case& c : cases) {
    json op = SubmitOp("1");
    op["array"] = c.array;
    json reply = Handle(op, caller_);
    EXPECT_EQ(reply["error"]["code"], c.code) << c.array;
    EXPECT_NE(reply["error"].value("message", "").find(c.says), std::string::npos) << reply.dump();
  }
  json wait = SubmitOp("1-2");
  wait["wait"] = true;
  EXPECT_EQ(Handle(wait, caller_)["error"]["message"],
            "\"wait\" does not go with \"array\": wait for the tasks one by one");
  EXPECT_TRUE(store_->List({})->empty());
}

TEST_F(JobArrayTest, TheNodesBoundsAreKept) {
  NodeOptions o = Options();
  o.admission.max_array_tasks = 3;
  Restart(o);
  auto refused = node_->SubmitArray(caller_, Slice(), ParseArraySpec("1-4").value());
  EXPECT_EQ(refused.status().message(),
            "an array of 4 tasks: this node takes at most 3 tasks in one array (max_array_tasks)");
  EXPECT_TRUE(node_->SubmitArray(caller_, Slice(), ParseArraySpec("1-3").value()).ok());
  // One large request times many tasks: refused before anything is stored.
  JobRequest big = Slice();
  big.env["BLOB"] = std::string(100 << 10, 'x');
  o.admission.max_array_tasks = kMaxArrayTasks;
  Restart(o);
  size_t stored = store_->List({})->size();
  auto too_big = node_->SubmitArray(caller_, big, ParseArraySpec("1-1000").value());
  EXPECT_EQ(too_big.status().code(), Code::kInvalidArgument);
  EXPECT_NE(too_big.status().message().find("at most 64MiB in one array"), std::string::npos)
      << too_big.status().message();
  EXPECT_EQ(store_->List({})->size(), stored);
  EXPECT_TRUE(node_->SubmitArray(caller_, big, ParseArraySpec("1-100").value()).ok());
  // Admission is Submit's: a request that never fits is refused whole.
  JobRequest huge = Slice();
  huge.gpus = 3;
  EXPECT_EQ(node_->SubmitArray(caller_, huge, ParseArraySpec("1-2").value()).status().code(),
            Code::kFailedPrecondition);
}

TEST_F(JobArrayTest, ARetriedSubmitFindsTheSameArray) {
  ArraySpec spec = ParseArraySpec("1-3%1").value();
  auto first = node_->SubmitArray(caller_, Slice(), spec, "k-1");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto retry = node_->SubmitArray(caller_, Slice(), spec, "k-1");
  ASSERT_TRUE(retry.ok()) << retry.status().ToString();
  EXPECT_EQ(retry->first.id, first->first.id);
  EXPECT_EQ(retry->count, 3);
  EXPECT_EQ(store_->List({})->size(), 1u) << "the array's rest";
  // The key names this array only: another spec, or a plain job, is refused.
  auto other = node_->SubmitArray(caller_, Slice(), ParseArraySpec("1-4%1").value(), "k-1");
  EXPECT_EQ(other.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(node_->Submit(caller_, Slice(), "k-1").status().code(), Code::kFailedPrecondition);
  auto plain = node_->Submit(caller_, Slice(), "k-2");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(node_->SubmitArray(caller_, Slice(), spec, "k-2").status().code(),
            Code::kFailedPrecondition);
}

// What reaches the disk: the syncs SQLite makes, counted. Stored job by job, 300 tasks would
// take at least 300 commits, each with its sync, to submit and as many to cancel.
class JobArrayDiskTest : public JobArrayTest {
 protected:
  int syncs_ = 0;
  store::testing::FaultyVfs vfs_{[this](store::testing::FaultyVfs::Op op) {
    if (op == store::testing::FaultyVfs::Op::kSync) ++syncs_;
    return SQLITE_OK;
  }};
};

// A cancel of 300 tasks is one commit per request's worth (kCancelMaxIds tasks), never one per
// task; the reply comes once all are cancelled.
TEST_F(JobArrayDiskTest, ThreeHundredTasksAreOneCommitToSubmitAndOneToCancel) {
  CollectReplies();
  syncs_ = 0;
  ASSERT_TRUE(node_->Submit(caller_, Slice()).ok());
  int one_job = syncs_;
  ASSERT_GE(one_job, 1);
  syncs_ = 0;
  json op = SubmitOp("1-300");
  op["hold"] = true;
  JobId array = Handle(op, caller_)["array"]["id"];
  int submit = syncs_;
  syncs_ = 0;
  // The tasks wait as one record, their array's rest: the cancel is answered at once.
  std::optional<json> now =
      service_->Handle(caller_, {{"op", "cancel"}, {"arrays", {array}}}, /*conn=*/5);
  int cancel = syncs_;
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ((*now)["results"][0]["array_tasks"], 300) << now->dump();
  EXPECT_EQ(Get(array + 299).state, JobState::kCancelled);
  // The id mark may add one sync of its own file.
  EXPECT_LE(submit, one_job + 1) << "one job took " << one_job;
  EXPECT_LE(cancel, one_job) << "one job took " << one_job;
}

TEST_F(JobArrayDiskTest, HoldAndReleaseOfTheMostIdsARequestMayNameAreOneCommitEach) {
  syncs_ = 0;
  ASSERT_TRUE(node_->Submit(caller_, Slice()).ok());
  int one_job = syncs_;
  json op = SubmitOp("1-64");
  op["hold"] = true;
  JobId array = Handle(op, caller_)["array"]["id"];
  json ids = json::array();
  for (JobId id = array; id < array + JobId{kCancelMaxIds}; ++id) ids.push_back(id);
  syncs_ = 0;
  json released = Handle({{"op", "release"}, {"ids", ids}}, caller_);
  int release = syncs_;
  syncs_ = 0;
  json held = Handle({{"op", "hold"}, {"ids", ids}}, caller_);
  int hold = syncs_;
  ASSERT_EQ(released["results"].size(), kCancelMaxIds) << released.dump();
  EXPECT_EQ(released["results"][63]["ok"], true) << released.dump();
  EXPECT_EQ(held["results"][63]["ok"], true) << held.dump();
  EXPECT_EQ(store_->Get(array + 63)->hold, Hold::kUser);
  // The release takes the tasks out of their array's rest first: a commit of its own.
  EXPECT_LE(release, 2 * one_job) << "one job took " << one_job;
  EXPECT_LE(hold, one_job) << "one job took " << one_job;
}

}  // namespace
}  // namespace pinpoint::daemon
