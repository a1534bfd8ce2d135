// The codec against the golden files of tests/golden/api/ (the daemon's own replies, pinned by
// src/daemon/service/service_wire_test.cc): each typed request encodes to its golden text, each golden
// text decodes and encodes back to itself, and what does not decode is an error naming the field.
#include "pinpoint/api_codec.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

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
  ASSERT_EQ(queue.jobs.size(), 6u);  // the session's held job, lease and dependent job, then the array
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
  EXPECT_EQ(FromJson<SubmitRequest>(j).status().message(), "invalid array '5-1': range 5-1 ends before it starts");
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
  EXPECT_EQ(ToJson(mine).dump(), R"({"all":true,"limit":5,"offset":10,"op":"queue","user":"alice"})");
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
  auto parsed = FromJson<UpdateRequest>(json::parse(R"({"op":"update","arrays":[12],"gpu_mem_bytes":4096,"priority":-3,"array_limit":0})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->arrays, std::vector<JobId>{12});
  EXPECT_EQ(parsed->edit.gpu_mem_bytes, std::optional<uint64_t>(4096));
  EXPECT_EQ(parsed->edit.priority, std::optional<int>(-3));
  EXPECT_EQ(parsed->edit.array_limit, std::optional<int>(0));
  auto mig = FromJson<UpdateRequest>(json::parse(R"({"op":"update","ids":[3],"mig_profile":"1g.10gb"})"));
  ASSERT_TRUE(mig.ok()) << mig.status().ToString();
  EXPECT_EQ(mig->edit.mig_profile, std::optional<std::string>("1g.10gb"));
  EXPECT_EQ(ToJson(*mig)["mig_profile"], "1g.10gb");
  EXPECT_FALSE(parsed->edit.time_limit_s.has_value());
  EXPECT_EQ(ToJson(*parsed), json::parse(R"({"op":"update","ids":[],"arrays":[12],"gpu_mem_bytes":4096,"priority":-3,"array_limit":0})"));
  EXPECT_EQ(FromJson<UpdateRequest>(json::parse(R"({"op":"update","ids":[3]})")).status().message(),
            "update names nothing to change: give time_limit_s, gpu_mem_bytes, gpu_share_pct, priority, name, array_limit, "
            "gpus, cpus, mem_bytes or mig_profile");
  for (const char* bad : {R"({"ids":[3],"gpu_mem_bytes":0})", R"({"ids":[3],"gpu_share_pct":101})",
                          R"({"ids":[3],"priority":1000001})", R"({"ids":[3],"time_limit_s":-1})",
                          R"({"ids":[3],"name":7})", R"({"ids":[3],"array_limit":10001})",
                          R"({"ids":[0],"name":"x"})", R"({"name":"x"})", R"({"ids":[3],"cpus":0})",
                          R"({"ids":[3],"gpus":1025})", R"({"ids":[3],"mem_bytes":-1})"}) {
    EXPECT_EQ(FromJson<UpdateRequest>(json::parse(bad)).status().code(), Code::kInvalidArgument) << bad;
  }
}

TEST(ApiCodecTest, UpdateCarriesGpusCpusAndHostMemory) {
  auto parsed = FromJson<UpdateRequest>(json::parse(R"({"op":"update","ids":[3],"gpus":0,"cpus":4,"mem_bytes":0})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->edit.gpus, std::optional<int>(0)) << "0 is a change: no GPU";
  EXPECT_EQ(parsed->edit.cpus, std::optional<int>(4));
  EXPECT_EQ(parsed->edit.mem_bytes, std::optional<uint64_t>(0)) << "0 lifts the limit";
  EXPECT_EQ(ToJson(*parsed), json::parse(R"({"op":"update","ids":[3],"gpus":0,"cpus":4,"mem_bytes":0})"));
}

TEST(ApiCodecGoldenTest, Gpus) {
  ExpectRequestGolden("gpus.request", GpusRequest{});
  GpusReply reply = ExpectReplyGolden<GpusReply>("gpus.reply");
  ASSERT_EQ(reply.devices.size(), 2u);
  EXPECT_EQ(reply.devices[0].mps_user, "uid 4242");
  EXPECT_FALSE(reply.devices[1].mps_user.has_value());
  EXPECT_FALSE(reply.watcher.has_value());
  EXPECT_EQ(reply.host.cpus_allocated, 2);

  // Every optional field: an MPS daemon, a reading, a drained MIG device held after its job, the watcher.
  GpusReply full = ExpectReplyGolden<GpusReply>("gpus_full.reply");
  ASSERT_EQ(full.devices.size(), 2u);
  ASSERT_TRUE(full.devices[0].mps.has_value());
  EXPECT_EQ(full.devices[0].mps->control_pid, 842);
  ASSERT_TRUE(full.devices[0].reading.has_value());
  EXPECT_EQ(full.devices[0].reading->power_mw, 136000u);
  EXPECT_EQ(full.devices[0].jobs.at(0).gpu_mem_used_bytes, 1617952768u);
  EXPECT_EQ(full.devices[1].drain_reason, "3 MPS faults within an hour");
  ASSERT_EQ(full.devices[1].holds.size(), 1u);
  EXPECT_EQ(full.devices[1].holds[0], (DeviceHoldView{17, "alice", {4242}, false, 1795319997266, 1795320057266, false}));
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

TEST(ApiCodecTest, ErrorsThatAreNotErrorsStayErrors) {
  EXPECT_EQ(ErrorFromJson(json{{"code", "ok"}, {"message", "fine"}}).code(), Code::kInternal);
  EXPECT_EQ(ErrorFromJson(json{{"code", "teapot"}}).code(), Code::kInternal);
  EXPECT_EQ(ErrorFromJson(json(7)).message(), "unknown error");
  EXPECT_EQ(ErrorFromJson(json{{"code", 5}, {"message", nullptr}}).message(), "unknown error");
}

// Replies a client must not trust: each is an error naming the field, never a crash.
TEST(ApiCodecTest, MalformedRepliesNameTheField) {
  struct Case {
    std::string text;
    std::string message;
  } cases[] = {
      {R"({"ok":true})", "reply.job is missing"},
      {R"({"job":[]})", "job must be a JSON object"},
      {R"({"job":{"state":"exploded"}})", "job.state is not a known job state"},
      {R"({"job":{"id":"7"}})", "job.id must be an integer"},
      {R"({"job":{"exit_code":1e3}})", "job.exit_code must be an integer"},
      {R"({"job":{"exit_code":99999999999}})", "job.exit_code out of range"},
      {R"({"job":{"allocations":{}}})", "job.allocations must be an array"},
      {R"({"job":{"allocations":[{"mode":1}]}})", "allocation.mode must be a string"},
      {R"({"job":{"request":{"argv":"ls"}}})", "request.argv must be an array of strings"},
      {R"({"job":{"request":{"env_hidden":"yes"}}})", "request.env_hidden must be true or false"},
      {R"({"job":{"usage":{"final":0}}})", "usage.final must be true or false"},
  };
  for (const auto& c : cases) {
    auto reply = FromJson<ShowReply>(json::parse(c.text));
    ASSERT_FALSE(reply.ok()) << c.text;
    EXPECT_EQ(reply.status().message(), c.message) << c.text;
  }
  EXPECT_EQ(FromJson<QueueReply>(json::parse(R"({"jobs":{}})")).status().message(), "reply.jobs must be an array");
  EXPECT_EQ(FromJson<GpusReply>(json::parse(R"({"devices":[{"mps":7}]})")).status().message(),
            "mps must be a JSON object");
  EXPECT_EQ(FromJson<GpusReply>(json::parse(R"({"devices":[{"power_mw":-1}]})")).status().message(),
            "device.power_mw out of range");
  EXPECT_EQ(FromJson<CancelReply>(json::parse(R"({"results":[{"id":1,"ok":false}]})")).status().message(),
            "result.error is missing");
  EXPECT_EQ(FromJson<LogsReply>(json::parse(R"({"data":"x","stream":"stdin"})")).status().message(),
            "reply.stream must be stdout or stderr");
}

TEST(ApiCodecTest, RepliesOfOlderDaemonsKeepDefaults) {
  auto job = FromJson<SubmitReply>(json::parse(R"({"ok":true,"job":{"id":7}})"));
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->job.id, 7);
  EXPECT_EQ(job->job.state, JobState::kPending);
  auto queue = FromJson<QueueReply>(json::parse(R"({"jobs":[]})"));
  ASSERT_TRUE(queue.ok());
  EXPECT_EQ(queue->more, 0) << "older daemons send no \"more\"";
}

// The daemon's request checks (docs/api.md) with their messages.
TEST(ApiCodecTest, RequestErrorsAreTheDocumentedOnes) {
  struct Case {
    std::string text;
    std::string message;
  } cases[] = {
      {R"({"op":"submit"})", "submit needs a \"request\" object"},
      {R"({"op":"submit","request":{},"wait":"yes"})", "\"wait\" must be true or false"},
      {R"({"op":"submit","request":{},"idempotency_key":null})", "\"idempotency_key\" must be a string"},
      {R"({"op":"submit","request":[]})", "request must be a JSON object"},
      {R"({"op":"submit","request":{"gpus":"1"}})", "request.gpus must be an integer"},
  };
  for (const auto& c : cases)
    EXPECT_EQ(FromJson<SubmitRequest>(json::parse(c.text)).status().message(), c.message) << c.text;
  auto submit = FromJson<SubmitRequest>(json::parse(R"({"op":"submit","request":{"argv":["x"]},"wait":true})"));
  ASSERT_TRUE(submit.ok());
  EXPECT_TRUE(submit->wait);
  EXPECT_FALSE(submit->idempotency_key.has_value());

  EXPECT_EQ(FromJson<ShowRequest>(json::parse(R"({"op":"show"})")).status().message(), "missing \"id\"");
  for (const char* id : {"0", "-3", "1.5", "\"7\"", "null", "18446744073709551615"})
    EXPECT_EQ(FromJson<WaitRequest>(json::parse(std::string(R"({"id":)") + id + "}")).status().message(),
              "\"id\" must be a positive job id")
        << id;

  EXPECT_EQ(FromJson<QueueRequest>(json::parse(R"({"user":7})")).status().message(), "\"user\" must be a user name");
  EXPECT_EQ(FromJson<QueueRequest>(json::parse(R"({"limit":10001})")).status().message(),
            "\"limit\" must be a count between 0 and 10000");
  EXPECT_EQ(FromJson<QueueRequest>(json::parse(R"({"offset":-1})")).status().message(),
            "\"offset\" must be a count between 0 and 1000000000");
  auto queue = FromJson<QueueRequest>(json::parse(R"({"all":"yes","limit":null})"));
  ASSERT_TRUE(queue.ok());
  EXPECT_FALSE(queue->all) << "a value that is not a boolean counts as false";
  EXPECT_EQ(queue->limit, 0);

  for (const char* ids : {"null", "[]", "7", "{}"})
    EXPECT_EQ(FromJson<CancelRequest>(json::parse(std::string(R"({"ids":)") + ids + "}")).status().message(),
              "\"ids\" must be a non-empty array of job ids")
        << ids;
  EXPECT_EQ(FromJson<CancelRequest>(json::parse(R"({"ids":[1,0]})")).status().message(),
            "\"ids\" must hold positive job ids");
  EXPECT_EQ(FromJson<CancelRequest>(json{{"ids", std::vector<int>(kCancelMaxIds + 1, 1)}}).status().message(),
            "at most 64 ids at once");
  auto arrays = FromJson<CancelRequest>(json::parse(R"({"arrays":[12],"ids":[]})"));
  ASSERT_TRUE(arrays.ok()) << arrays.status().message();
  EXPECT_TRUE(arrays->ids.empty());
  EXPECT_EQ(arrays->arrays, std::vector<JobId>{12});
  EXPECT_EQ(FromJson<CancelRequest>(json::parse(R"({"arrays":[12]})"))->arrays, std::vector<JobId>{12});
  EXPECT_EQ(FromJson<CancelRequest>(json::parse(R"({"arrays":[],"ids":[]})")).status().message(),
            "\"ids\" and \"arrays\" name no job");
  EXPECT_EQ(FromJson<CancelRequest>(json::parse(R"({"arrays":[0]})")).status().message(),
            "\"arrays\" must hold positive job ids");
  EXPECT_EQ(FromJson<CancelRequest>(json::parse(R"({"arrays":7})")).status().message(),
            "\"arrays\" must be an array of job ids");
  EXPECT_EQ(FromJson<CancelRequest>(json{{"ids", std::vector<int>(32, 1)}, {"arrays", std::vector<int>(33, 1)}})
                .status()
                .message(),
            "at most 64 ids at once");
  // update_array: arrays and a limit from 0 to kMaxArrayTasks.
  EXPECT_EQ(ToJson(UpdateArrayRequest{{12}, 4}), json::parse(R"({"op":"update_array","arrays":[12],"limit":4})"));
  EXPECT_EQ(FromJson<UpdateArrayRequest>(json::parse(R"({"arrays":[12],"limit":0})"))->arrays, std::vector<JobId>{12});
  EXPECT_EQ(FromJson<UpdateArrayRequest>(json::parse(R"({"arrays":[12],"limit":10001})")).status().message(),
            "\"limit\" must be a number of tasks from 0 (no limit) to 10000");
  EXPECT_EQ(FromJson<UpdateArrayRequest>(json::parse(R"({"arrays":[12]})")).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(FromJson<UpdateArrayRequest>(json::parse(R"({"limit":2})")).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(FromJson<UpdateArrayRequest>(json::parse(R"({"arrays":[0],"limit":2})")).status().message(),
            "\"arrays\" must hold positive job ids");
  // hold and release take arrays as cancel does; without them they read and write as always.
  EXPECT_EQ(ToJson(HoldRequest{{4}, {}}), json::parse(R"({"op":"hold","ids":[4]})"));
  EXPECT_EQ(ToJson(ReleaseRequest{{}, {12}}), json::parse(R"({"op":"release","ids":[],"arrays":[12]})"));
  EXPECT_EQ(FromJson<HoldRequest>(json::parse(R"({"arrays":[12],"ids":[3]})"))->arrays, std::vector<JobId>{12});
  EXPECT_EQ(FromJson<ReleaseRequest>(json::parse(R"({"arrays":[12]})"))->arrays, std::vector<JobId>{12});
  EXPECT_EQ(FromJson<HoldRequest>(json::parse(R"({"arrays":[-1]})")).status().message(),
            "\"arrays\" must hold positive job ids");
  EXPECT_EQ(FromJson<ReleaseRequest>(json::parse(R"({"arrays":[],"ids":[]})")).status().message(),
            "\"ids\" and \"arrays\" name no job");

  EXPECT_EQ(FromJson<LogsRequest>(json::parse(R"({"id":1,"stream":1})")).status().message(),
            "\"stream\" must be stdout or stderr");
  EXPECT_EQ(FromJson<LogsRequest>(json::parse(R"({"id":1,"stream":"stdin"})")).status().message(),
            "stream must be stdout or stderr");
  EXPECT_EQ(FromJson<LogsRequest>(json::parse(R"({"id":1,"max_bytes":-1})")).status().message(),
            "\"max_bytes\" must be at most 524288");
  auto logs = FromJson<LogsRequest>(json::parse(R"({"id":3,"stream":"stderr","max_bytes":10})"));
  ASSERT_TRUE(logs.ok());
  EXPECT_EQ(logs->stream, LogStream::kStderr);
  EXPECT_EQ(logs->max_bytes, 10u);
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

TEST(ApiCodecTest, AttachLeaseNeedsAPositivePidAndAUid) {
  EXPECT_FALSE(FromJson<AttachLeaseRequest>(json{{"op", "attach_lease"}, {"id", 2}}).ok());
  EXPECT_FALSE(FromJson<AttachLeaseRequest>(json{{"op", "attach_lease"}, {"id", 2}, {"pid", -1}}).ok());
  EXPECT_FALSE(FromJson<AttachLeaseRequest>(json{{"op", "attach_lease"}, {"id", 2}, {"pid", 5}, {"container_uid", -3}}).ok());
  EXPECT_FALSE(FromJson<OpenLeaseRequest>(json{{"op", "open_lease"}}).ok());
  EXPECT_FALSE(FromJson<OpenLeaseRequest>(json{{"op", "open_lease"}, {"request", {{"gpus", "two"}}}}).ok());
}

}  // namespace
}  // namespace pinpoint

namespace pinpoint {
namespace {

TEST(ApiCodecTest, QueueSelectionsRoundTripWithinTheirBounds) {
  QueueRequest q;
  q.names = {"a", "b"};
  q.states = {JobState::kPending, JobState::kCancelled};
  q.ids = {4, 12};
  json j = ToJson(q);
  EXPECT_EQ(j["states"], json::parse(R"(["pending","cancelled"])"));
  auto back = FromJson<QueueRequest>(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->names, q.names);
  EXPECT_EQ(back->states, q.states);
  EXPECT_EQ(back->ids, q.ids);
  EXPECT_FALSE(ToJson(QueueRequest{}).contains("states")) << "a request without selections reads as before";
  json repeated = json{{"states", std::vector<std::string>(100000, "pending")}};
  EXPECT_EQ(FromJson<QueueRequest>(repeated)->states, std::vector<JobState>{JobState::kPending})
      << "a state named many times is one (every job is compared with each)";
  QueueRequest with_start;
  with_start.start = true;
  EXPECT_TRUE(FromJson<QueueRequest>(ToJson(with_start))->start);
  EXPECT_FALSE(ToJson(QueueRequest{}).contains("start"));
  QueueReply reply;
  reply.starts = {{2, 1795845127284, ""}, {3, std::nullopt, "held"}};
  json r = ToJson(reply);
  EXPECT_EQ(r["starts"], json::parse(R"([{"id":2,"start_ms":1795845127284},{"id":3,"why":"held"}])"));
  auto decoded = FromJson<QueueReply>(r);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->starts.at(0).start_ms, std::optional<int64_t>(1795845127284));
  EXPECT_EQ(decoded->starts.at(1).why, "held");
  EXPECT_FALSE(ToJson(QueueReply{}).contains("starts")) << "a reply without estimates reads as before";
  json many_ids = json{{"ids", std::vector<JobId>(kQueueMaxIds + 1, 3)}};
  for (const json& bad : {json{{"states", {"bogus"}}}, json{{"states", "pending"}}, many_ids, json{{"ids", {0}}},
                          json{{"names", std::vector<std::string>(kQueueMaxNames + 1, "n")}}, json{{"names", {1}}}}) {
    EXPECT_EQ(FromJson<QueueRequest>(bad).status().code(), Code::kInvalidArgument) << bad.dump();
  }
}

}  // namespace
}  // namespace pinpoint
