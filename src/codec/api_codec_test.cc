// The codec against the golden files of tests/golden/api/ (the daemon's own replies, pinned by
// src/daemon/service/service_wire_test.cc): each typed request encodes to its golden text, each
// golden text decodes and encodes back to itself, and what does not decode is an error naming the
// field.
#include "pinpoint/api_codec.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace pinpoint {
namespace {

using nlohmann::json;

std::string Golden(const std::string& name) {
  std::ifstream in(std::string(PINPOINT_SOURCE_DIR) + "/tests/golden/api/" + name + ".json");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

std::string Pretty(const json& j) { return j.dump(2) + "\n"; }

// A request: the typed value encodes to the golden text, which decodes to the same value.
template <typename Request>
void ExpectRequestGolden(const std::string& name, const Request& request) {
  std::string golden = Golden(name);
  EXPECT_EQ(Pretty(ToJson(request)), golden) << name;
  auto decoded = FromJson<Request>(json::parse(golden));
  ASSERT_TRUE(decoded.ok()) << name << ": " << decoded.status().message();
  EXPECT_EQ(Pretty(ToJson(*decoded)), golden) << name;
}

// A reply: the golden text decodes, and the decoded value encodes to the same text, so the
// struct holds every field the daemon sends.
template <typename Reply>
Reply ExpectReplyGolden(const std::string& name) {
  std::string golden = Golden(name);
  auto decoded = FromJson<Reply>(json::parse(golden));
  EXPECT_TRUE(decoded.ok()) << name << ": " << decoded.status().message();
  if (!decoded.ok()) return Reply{};
  json again = ToJson(*decoded);
  again["ok"] = true;
  EXPECT_EQ(Pretty(again), golden) << name;
  return *decoded;
}

JobRequest TrainRequest() {
  JobRequest r;
  r.name = "train";
  r.argv = {"python3", "train.py", "--lr", "0.1"};
  r.cwd = "/home/alice";
  r.env = {{"PATH", "/usr/bin:/bin"}, {"TOKEN", "secret"}};
  r.gpus = 1;
  r.gpu_mem_bytes = 4ull << 30;
  r.gpu_share_pct = 20;
  r.cpus = 2;
  r.mem_bytes = 1ull << 30;
  return r;
}

TEST(ApiCodecGoldenTest, Version) {
  ExpectRequestGolden("version.request", VersionRequest{});
  VersionReply v = ExpectReplyGolden<VersionReply>("version.reply");
  EXPECT_EQ(v.version, "0.1.0");
  EXPECT_EQ(v.schema, 3);
  EXPECT_FALSE(v.metrics_port.has_value());
}

TEST(ApiCodecGoldenTest, Submit) {
  SubmitRequest request;
  request.request = TrainRequest();
  request.idempotency_key = "k-1";
  ExpectRequestGolden("submit.request", request);
  SubmitReply reply = ExpectReplyGolden<SubmitReply>("submit.reply");
  EXPECT_EQ(reply.job.id, 1);
  EXPECT_EQ(reply.job.state, JobState::kPending);
  EXPECT_EQ(reply.job.env_shown, EnvShown::kFull);
  EXPECT_EQ(reply.job.request.env.count("TOKEN"), 0u) << "env_deny: never stored, never sent back";
  EXPECT_EQ(reply.job.request.env.at("PATH"), "/usr/bin:/bin");
  EXPECT_EQ(reply.job.user, "uid 4242");
  EXPECT_EQ(reply.job.hold, Hold::kNone);

  SubmitRequest held = request;
  held.idempotency_key = "k-2";
  held.hold = true;
  held.request.output_path = "logs/%j.out";
  ExpectRequestGolden("submit_held.request", held);
  SubmitReply held_reply = ExpectReplyGolden<SubmitReply>("submit_held.reply");
  EXPECT_EQ(held_reply.job.hold, Hold::kUser);
  EXPECT_EQ(held_reply.job.reason, "held");
  EXPECT_EQ(held_reply.job.request.output_path, "logs/%j.out");
}

// The fields a job script gave travel as "from_script", each field by its word, and only when
// there are some (a request without them reads as it always has).
TEST(ApiCodecTest, SubmitFromScriptTravelsByFieldWord) {
  SubmitRequest request;
  request.request = TrainRequest();
  EXPECT_FALSE(ToJson(request).contains("from_script"));
  request.from_script = {{ScriptField::kPriority, "job.sh:3"}, {ScriptField::kAfterOk, "job.sh:4"}};
  nlohmann::json j = ToJson(request);
  EXPECT_EQ(j["from_script"], (nlohmann::json{{"priority", "job.sh:3"}, {"afterok", "job.sh:4"}}));
  auto back = FromJson<SubmitRequest>(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->from_script, request.from_script);
  for (int f = 0; f <= static_cast<int>(ScriptField::kTimeLimit); ++f) {
    auto field = static_cast<ScriptField>(f);
    EXPECT_EQ(ScriptFieldFromName(ScriptFieldName(field)), field) << ScriptFieldName(field);
  }
  j["from_script"] = {{"priority", "job.sh:3\x1b]0;pwned\x07"}};
  EXPECT_EQ(FromJson<SubmitRequest>(j).status().code(), Code::kInvalidArgument);
  j["from_script"] = {{"gpus", "job.sh:3"}};
  EXPECT_EQ(FromJson<SubmitRequest>(j).status().code(), Code::kInvalidArgument);
  j["from_script"] = "priority";
  EXPECT_EQ(FromJson<SubmitRequest>(j).status().code(), Code::kInvalidArgument);
}

TEST(ApiCodecGoldenTest, SubmitWithATimeLimitAndDependencies) {
  SubmitRequest request;
  request.request = TrainRequest();
  request.idempotency_key = "k-4";
  request.request.time_limit_s = 3600;
  request.request.after = {1};
  request.request.afterok = {2};
  ExpectRequestGolden("submit_after.request", request);
  SubmitReply reply = ExpectReplyGolden<SubmitReply>("submit_after.reply");
  EXPECT_EQ(reply.job.request.time_limit_s, 3600);
  EXPECT_EQ(reply.job.request.after, std::vector<JobId>{1});
  EXPECT_EQ(reply.job.request.afterok, std::vector<JobId>{2});
}

TEST(ApiCodecGoldenTest, SubmitArray) {
  SubmitRequest request;
  request.request.name = "sweep";
  request.request.argv = {"python3", "sweep.py"};
  request.request.cwd = "/home/alice";
  request.request.env = {{"PATH", "/usr/bin:/bin"}};
  request.request.gpus = 1;
  request.request.gpu_mem_bytes = 4ull << 30;
  request.request.output_path = "logs/%A_%a.out";
  request.idempotency_key = "k-3";
  request.array = ArraySpec{{1, 2, 3}, 2};
  ExpectRequestGolden("submit_array.request", request);
  SubmitReply reply = ExpectReplyGolden<SubmitReply>("submit_array.reply");
  ASSERT_TRUE(reply.array.has_value());
  EXPECT_EQ(*reply.array, (SubmittedArrayView{5, 3, 5, 7}));
  EXPECT_EQ(reply.job.id, 5);
  EXPECT_EQ(reply.job.array, (ArrayTask{5, 1, 3, 1, 3, 2}));
  EXPECT_FALSE(ExpectReplyGolden<SubmitReply>("submit.reply").array.has_value());

  QueueReply queue = ExpectReplyGolden<QueueReply>("queue_array.reply");
  ASSERT_EQ(queue.jobs.size(),
            6u);  // the session's held job, lease and dependent job, then the array
  EXPECT_EQ(queue.jobs[0].array, ArrayTask{});
  EXPECT_EQ(queue.jobs[4].state, JobState::kRunning);
  EXPECT_EQ(queue.jobs[5].reason, reason::kArrayLimit);
  EXPECT_EQ(queue.jobs[5].array.index, 3);

  ExpectRequestGolden("cancel_array.request", CancelRequest{{}, {5}});
  CancelReply cancelled = ExpectReplyGolden<CancelReply>("cancel_array.reply");
  ASSERT_EQ(cancelled.results.size(), 1u);
  EXPECT_TRUE(cancelled.results[0].status.ok());
  EXPECT_EQ(cancelled.results[0].array_tasks, 3);
  EXPECT_EQ(ExpectReplyGolden<CancelReply>("cancel.reply").results[0].array_tasks, 0);
}

TEST(ApiCodecTest, SubmitArrayRefusesWhatTheParserRefuses) {
  json j = json::parse(Golden("submit_array.request"));
  j["array"] = "5-1";
  EXPECT_EQ(FromJson<SubmitRequest>(j).status().message(),
            "invalid array '5-1': range 5-1 ends before it starts");
  j["array"] = json::array({1, 2});
  EXPECT_EQ(FromJson<SubmitRequest>(j).status().code(), Code::kInvalidArgument);
  j.erase("array");
  EXPECT_FALSE(FromJson<SubmitRequest>(j)->array.has_value());
}

TEST(ApiCodecGoldenTest, Wait) {
  ExpectRequestGolden("wait.request", WaitRequest{1});
  WaitReply reply = ExpectReplyGolden<WaitReply>("wait.reply");
  EXPECT_EQ(reply.job.state, JobState::kCompleted);
  EXPECT_EQ(reply.job.exit_code, 0);
  EXPECT_FALSE(reply.job.term_signal.has_value());
  EXPECT_EQ(reply.job.env_shown, EnvShown::kOmitted) << "a wait carries no environment, for anyone";
  EXPECT_TRUE(reply.job.request.env.empty());

  WaitRequest several;
  several.ids = {1};
  ExpectRequestGolden("wait_ids.request", several);
  WaitReply all = ExpectReplyGolden<WaitReply>("wait_ids.reply");
  ASSERT_EQ(all.jobs.size(), 1u);
  EXPECT_EQ(all.jobs[0].state, JobState::kCompleted);
  EXPECT_EQ(all.jobs[0].env_shown, EnvShown::kOmitted) << "several jobs: no environments, as queue";
}

TEST(ApiCodecTest, WaitNamesOneJobOrSeveral) {
  auto both = FromJson<WaitRequest>(json::parse(R"({"op":"wait","id":1,"ids":[2]})"));
  EXPECT_EQ(both.status().message(), "give \"id\" or \"ids\", not both");
  auto empty = FromJson<WaitRequest>(json::parse(R"({"op":"wait","ids":[]})"));
  EXPECT_EQ(empty.status().code(), Code::kInvalidArgument);
  json too_many = {{"op", "wait"}, {"ids", std::vector<JobId>(kWaitMaxIds + 1, 1)}};
  EXPECT_EQ(FromJson<WaitRequest>(too_many).status().message(), "at most 256 ids at once");
  auto ids = FromJson<WaitRequest>(json::parse(R"({"op":"wait","ids":[3,1,3]})"));
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->ids, (std::vector<JobId>{3, 1, 3}));
  EXPECT_EQ(ids->id, 0);
}

TEST(ApiCodecGoldenTest, Queue) {
  ExpectRequestGolden("queue.request", QueueRequest{});
  QueueRequest ended{true, std::nullopt, 1000, 0};
  ended.ended_after_ms = 1714521600000;
  ended.ended_before_ms = 1717200000000;
  ExpectRequestGolden("queue_ended.request", ended);
  QueueReply reply = ExpectReplyGolden<QueueReply>("queue.reply");
  ASSERT_EQ(reply.jobs.size(), 1u);
  EXPECT_EQ(reply.jobs[0].env_shown, EnvShown::kOmitted);
  EXPECT_EQ(reply.jobs[0].state, JobState::kRunning);
  ASSERT_EQ(reply.jobs[0].allocations.size(), 1u);
  EXPECT_EQ(reply.jobs[0].allocations[0].uuid, "GPU-0");
  EXPECT_EQ(reply.limit, kQueueDefaultLimit);
  EXPECT_EQ(reply.total, 1);

  QueueRequest mine;
  mine.all = true;
  mine.user = "alice";
  mine.limit = 5;
  mine.offset = 10;
  EXPECT_EQ(ToJson(mine).dump(),
            R"({"all":true,"limit":5,"offset":10,"op":"queue","user":"alice"})");
}

TEST(ApiCodecGoldenTest, Show) {
  ExpectRequestGolden("show.request", ShowRequest{1});
  ShowReply reply = ExpectReplyGolden<ShowReply>("show.reply");
  EXPECT_EQ(reply.job.env_shown, EnvShown::kFull);
  ASSERT_EQ(reply.events.size(), 3u);
  EXPECT_EQ(reply.events[0].kind, "submit");
  EXPECT_EQ(reply.events[1].kind, "env-dropped");
  EXPECT_EQ(reply.events[1].detail, "not stored (they match the node's env_deny): TOKEN");
  EXPECT_EQ(reply.events[2].time_ms, 1700000001500);
  ShowReply hidden = ExpectReplyGolden<ShowReply>("show_hidden.reply");
  EXPECT_EQ(hidden.job.env_shown, EnvShown::kHidden);
}

TEST(ApiCodecGoldenTest, Cancel) {
  ExpectRequestGolden("cancel.request", CancelRequest{{1, 99}});
  CancelReply reply = ExpectReplyGolden<CancelReply>("cancel.reply");
  ASSERT_EQ(reply.results.size(), 2u);
  EXPECT_EQ(reply.results[0].status.code(), Code::kFailedPrecondition);
  EXPECT_EQ(reply.results[1].id, 99);
  EXPECT_EQ(reply.results[1].status.message(), "no job 99");
}

TEST(ApiCodecGoldenTest, HoldAndRelease) {
  ExpectRequestGolden("hold.request", HoldRequest{{2, 1}});
  HoldReply held = ExpectReplyGolden<HoldReply>("hold.reply");
  ASSERT_EQ(held.results.size(), 2u);
  EXPECT_TRUE(held.results[0].status.ok());
  EXPECT_EQ(held.results[1].status.code(), Code::kFailedPrecondition);
  ExpectRequestGolden("release.request", ReleaseRequest{{2}});
  ReleaseReply released = ExpectReplyGolden<ReleaseReply>("release.reply");
  ASSERT_EQ(released.results.size(), 1u);
  EXPECT_TRUE(released.results[0].status.ok());
  ExpectRequestGolden("update_array.request", UpdateArrayRequest{{5}, 3});
  UpdateArrayReply updated = ExpectReplyGolden<UpdateArrayReply>("update_array.reply");
  ASSERT_EQ(updated.results.size(), 1u);
  EXPECT_EQ(updated.results[0].array_tasks, 3);
}

TEST(ApiCodecGoldenTest, Update) {
  JobEdit edit;
  edit.time_limit_s = 7200;
  edit.name = "renamed";
  ExpectRequestGolden("update.request", UpdateRequest{{4, 1}, {}, edit});
  UpdateReply reply = ExpectReplyGolden<UpdateReply>("update.reply");
  ASSERT_EQ(reply.results.size(), 2u);
  EXPECT_TRUE(reply.results[0].status.ok());
  EXPECT_EQ(reply.results[1].status.code(), Code::kFailedPrecondition);
}

TEST(ApiCodecTest, UpdateNamesSomethingToChangeWithinItsBounds) {
  auto parsed = FromJson<UpdateRequest>(json::parse(
      R"({"op":"update","arrays":[12],"gpu_mem_bytes":4096,"priority":-3,"array_limit":0})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->arrays, std::vector<JobId>{12});
  EXPECT_EQ(parsed->edit.gpu_mem_bytes, std::optional<uint64_t>(4096));
  EXPECT_EQ(parsed->edit.priority, std::optional<int>(-3));
  EXPECT_EQ(parsed->edit.array_limit, std::optional<int>(0));
  auto mig =
      FromJson<UpdateRequest>(json::parse(R"({"op":"update","ids":[3],"mig_profile":"1g.10gb"})"));
  ASSERT_TRUE(mig.ok()) << mig.status().ToString();
  EXPECT_EQ(mig->edit.mig_profile, std::optional<std::string>("1g.10gb"));
  EXPECT_EQ(ToJson(*mig)["mig_profile"], "1g.10gb");
  EXPECT_FALSE(parsed->edit.time_limit_s.has_value());
  EXPECT_EQ(
      ToJson(*parsed),
      json::parse(
          R"({"op":"update","ids":[],"arrays":[12],"gpu_mem_bytes":4096,"priority":-3,"array_limit":0})"));
  EXPECT_EQ(FromJson<UpdateRequest>(json::parse(R"({"op":"update","ids":[3]})")).status().message(),
            "update names nothing to change: give time_limit_s, gpu_mem_bytes, gpu_share_pct, "
            "priority, name, array_limit, "
            "gpus, cpus, mem_bytes, mig_profile or qos");
  auto qos = FromJson<UpdateRequest>(json::parse(R"({"op":"update","ids":[3],"qos":"scavenger"})"));
  ASSERT_TRUE(qos.ok()) << qos.status().ToString();
  EXPECT_EQ(qos->edit.qos, std::optional<std::string>("scavenger"));
  EXPECT_EQ(ToJson(*qos)["qos"], "scavenger");
  EXPECT_EQ(FromJson<UpdateRequest>(json::parse(R"({"op":"update","ids":[3],"qos":""})"))
                .status()
                .message(),
            "qos: names no class");
  for (const char* bad : {R"({"ids":[3],"gpu_mem_bytes":0})", R"({"ids":[3],"gpu_share_pct":101})",
                          R"({"ids":[3],"priority":1000001})", R"({"ids":[3],"time_limit_s":-1})",
                          R"({"ids":[3],"name":7})", R"({"ids":[3],"array_limit":10001})",
                          R"({"ids":[0],"name":"x"})", R"({"name":"x"})", R"({"ids":[3],"cpus":0})",
                          R"({"ids":[3],"gpus":1025})", R"({"ids":[3],"mem_bytes":-1})"}) {
    EXPECT_EQ(FromJson<UpdateRequest>(json::parse(bad)).status().code(), Code::kInvalidArgument)
        << bad;
  }
}

TEST(ApiCodecTest, UpdateCarriesGpusCpusAndHostMemory) {
  auto parsed = FromJson<UpdateRequest>(
      json::parse(R"({"op":"update","ids":[3],"gpus":0,"cpus":4,"mem_bytes":0})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->edit.gpus, std::optional<int>(0)) << "0 is a change: no GPU";
  EXPECT_EQ(parsed->edit.cpus, std::optional<int>(4));
  EXPECT_EQ(parsed->edit.mem_bytes, std::optional<uint64_t>(0)) << "0 lifts the limit";
  EXPECT_EQ(ToJson(*parsed),
            json::parse(R"({"op":"update","ids":[3],"gpus":0,"cpus":4,"mem_bytes":0})"));
}

TEST(ApiCodecGoldenTest, Gpus) {
  ExpectRequestGolden("gpus.request", GpusRequest{});
  GpusReply reply = ExpectReplyGolden<GpusReply>("gpus.reply");
  ASSERT_EQ(reply.devices.size(), 2u);
  EXPECT_EQ(reply.devices[0].mps_user, "uid 4242");
  EXPECT_FALSE(reply.devices[1].mps_user.has_value());
  EXPECT_FALSE(reply.watcher.has_value());
  EXPECT_EQ(reply.host.cpus_allocated, 2);

  // Every optional field: an MPS daemon, a reading, a drained MIG device held after its job, the
  // watcher.
  GpusReply full = ExpectReplyGolden<GpusReply>("gpus_full.reply");
  ASSERT_EQ(full.devices.size(), 2u);
  ASSERT_TRUE(full.devices[0].mps.has_value());
  EXPECT_EQ(full.devices[0].mps->control_pid, 842);
  ASSERT_TRUE(full.devices[0].reading.has_value());
  EXPECT_EQ(full.devices[0].reading->power_mw, 136000u);
  EXPECT_EQ(full.devices[0].jobs.at(0).gpu_mem_used_bytes, 1617952768u);
  EXPECT_EQ(full.devices[1].drain_reason, "3 MPS faults within an hour");
  ASSERT_EQ(full.devices[1].holds.size(), 1u);
  EXPECT_EQ(full.devices[1].holds[0],
            (DeviceHoldView{17, "alice", {4242}, false, 1795319997266, 1795320057266, false, {}}));
  EXPECT_TRUE(full.devices[0].holds.empty());
  EXPECT_FALSE(full.devices[1].reading.has_value());
  ASSERT_TRUE(full.watcher.has_value());
  EXPECT_EQ(full.watcher->polls, 42);
}

TEST(ApiCodecGoldenTest, Logs) {
  ExpectRequestGolden("logs.request", LogsRequest{1, LogStream::kStdout, kLogsDefaultMaxBytes});
  LogsReply reply = ExpectReplyGolden<LogsReply>("logs.reply");
  EXPECT_EQ(reply.data, "hello\n");
  EXPECT_EQ(reply.stream, LogStream::kStdout);
  EXPECT_EQ(reply.end_offset, 6u);
  EXPECT_TRUE(reply.ended);
  LogsRequest tail{1};
  tail.tail_lines = 20;
  ExpectRequestGolden("logs_tail.request", tail);
  LogsRequest follow{1, LogStream::kStderr, kLogsMaxBytes};
  follow.from_offset = 6;
  follow.follow = true;
  ExpectRequestGolden("logs_follow.request", follow);
}

TEST(ApiCodecGoldenTest, ErrorReply) {
  json reply = json::parse(Golden("error.reply"));
  Status error = ErrorFromJson(reply["error"]);
  EXPECT_EQ(error.code(), Code::kInvalidArgument);
  EXPECT_EQ(error.message(), "unknown op 'frobnicate'");
  EXPECT_EQ(Pretty(json{{"ok", false}, {"error", ErrorToJson(error)}}), Golden("error.reply"));
}

TEST(ApiCodecTest, LeaseRequestsAreTheGoldenOnes) {
  OpenLeaseRequest open;
  open.request.name = "web";
  open.request.gpu_mem_bytes = 5ull << 30;
  open.request.gpu_share_pct = 20;
  ExpectRequestGolden("open_lease.request", open);
  ExpectRequestGolden("attach_lease.request", AttachLeaseRequest{2, 777, 4242u});
  ExpectRequestGolden("close_lease.request", CloseLeaseRequest{2});
}

// A lease's time limit travels only when asked, so that a daemon from before lease time limits
// reads every other request as it did.
TEST(ApiCodecTest, ALeasesTimeLimitIsSentOnlyWhenAsked) {
  EXPECT_FALSE(ToJson(OpenLeaseRequest{}).at("request").contains("time_limit_s"));
  OpenLeaseRequest open;
  open.request.time_limit_s = 7200;
  json j = ToJson(open);
  EXPECT_EQ(j.at("request").at("time_limit_s"), 7200);
  auto back = FromJson<OpenLeaseRequest>(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->request, open.request);
}

}  // namespace
}  // namespace pinpoint
