// The codec's errors: what does not decode is one error naming the field, requests are checked
// as the daemon documents, and a selection round-trips within its bounds (the golden files are
// api_codec_test.cc's).
#include <gtest/gtest.h>

#include "pinpoint/api_codec.h"

namespace pinpoint {
namespace {

using nlohmann::json;

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
  EXPECT_EQ(FromJson<QueueReply>(json::parse(R"({"jobs":{}})")).status().message(),
            "reply.jobs must be an array");
  EXPECT_EQ(FromJson<GpusReply>(json::parse(R"({"devices":[{"mps":7}]})")).status().message(),
            "mps must be a JSON object");
  EXPECT_EQ(FromJson<GpusReply>(json::parse(R"({"devices":[{"power_mw":-1}]})")).status().message(),
            "device.power_mw out of range");
  EXPECT_EQ(
      FromJson<CancelReply>(json::parse(R"({"results":[{"id":1,"ok":false}]})")).status().message(),
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
      {R"({"op":"submit","request":{},"idempotency_key":null})",
       "\"idempotency_key\" must be a string"},
      {R"({"op":"submit","request":[]})", "request must be a JSON object"},
      {R"({"op":"submit","request":{"gpus":"1"}})", "request.gpus must be an integer"},
  };
  for (const auto& c : cases)
    EXPECT_EQ(FromJson<SubmitRequest>(json::parse(c.text)).status().message(), c.message) << c.text;
  auto submit = FromJson<SubmitRequest>(
      json::parse(R"({"op":"submit","request":{"argv":["x"]},"wait":true})"));
  ASSERT_TRUE(submit.ok());
  EXPECT_TRUE(submit->wait);
  EXPECT_FALSE(submit->idempotency_key.has_value());

  EXPECT_EQ(FromJson<ShowRequest>(json::parse(R"({"op":"show"})")).status().message(),
            "missing \"id\"");
  for (const char* id : {"0", "-3", "1.5", "\"7\"", "null", "18446744073709551615"})
    EXPECT_EQ(
        FromJson<WaitRequest>(json::parse(std::string(R"({"id":)") + id + "}")).status().message(),
        "\"id\" must be a positive job id")
        << id;

  EXPECT_EQ(FromJson<QueueRequest>(json::parse(R"({"user":7})")).status().message(),
            "\"user\" must be a user name");
  EXPECT_EQ(FromJson<QueueRequest>(json::parse(R"({"limit":10001})")).status().message(),
            "\"limit\" must be a count between 0 and 10000");
  EXPECT_EQ(FromJson<QueueRequest>(json::parse(R"({"offset":-1})")).status().message(),
            "\"offset\" must be a count between 0 and 1000000000");
  auto queue = FromJson<QueueRequest>(json::parse(R"({"all":"yes","limit":null})"));
  ASSERT_TRUE(queue.ok());
  EXPECT_FALSE(queue->all) << "a value that is not a boolean counts as false";
  EXPECT_EQ(queue->limit, 0);

  for (const char* ids : {"null", "[]", "7", "{}"})
    EXPECT_EQ(FromJson<CancelRequest>(json::parse(std::string(R"({"ids":)") + ids + "}"))
                  .status()
                  .message(),
              "\"ids\" must be a non-empty array of job ids")
        << ids;
  EXPECT_EQ(FromJson<CancelRequest>(json::parse(R"({"ids":[1,0]})")).status().message(),
            "\"ids\" must hold positive job ids");
  EXPECT_EQ(FromJson<CancelRequest>(json{{"ids", std::vector<int>(kCancelMaxIds + 1, 1)}})
                .status()
                .message(),
            "at most 64 ids at once");
  auto arrays = FromJson<CancelRequest>(json::parse(R"({"arrays":[12],"ids":[]})"));
  ASSERT_TRUE(arrays.ok()) << arrays.status().message();
  EXPECT_TRUE(arrays->ids.empty());
  EXPECT_EQ(arrays->arrays, std::vector<JobId>{12});
  EXPECT_EQ(FromJson<CancelRequest>(json::parse(R"({"arrays":[12]})"))->arrays,
            std::vector<JobId>{12});
  EXPECT_EQ(FromJson<CancelRequest>(json::parse(R"({"arrays":[],"ids":[]})")).status().message(),
            "\"ids\" and \"arrays\" name no job");
  EXPECT_EQ(FromJson<CancelRequest>(json::parse(R"({"arrays":[0]})")).status().message(),
            "\"arrays\" must hold positive job ids");
  EXPECT_EQ(FromJson<CancelRequest>(json::parse(R"({"arrays":7})")).status().message(),
            "\"arrays\" must be an array of job ids");
  EXPECT_EQ(FromJson<CancelRequest>(
                json{{"ids", std::vector<int>(32, 1)}, {"arrays", std::vector<int>(33, 1)}})
                .status()
                .message(),
            "at most 64 ids at once");
  // update_array: arrays and a limit from 0 to kMaxArrayTasks.
  EXPECT_EQ(ToJson(UpdateArrayRequest{{12}, 4}),
            json::parse(R"({"op":"update_array","arrays":[12],"limit":4})"));
  EXPECT_EQ(FromJson<UpdateArrayRequest>(json::parse(R"({"arrays":[12],"limit":0})"))->arrays,
            std::vector<JobId>{12});
  EXPECT_EQ(FromJson<UpdateArrayRequest>(json::parse(R"({"arrays":[12],"limit":10001})"))
                .status()
                .message(),
            "\"limit\" must be a number of tasks from 0 (no limit) to 10000");
  EXPECT_EQ(FromJson<UpdateArrayRequest>(json::parse(R"({"arrays":[12]})")).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(FromJson<UpdateArrayRequest>(json::parse(R"({"limit":2})")).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(
      FromJson<UpdateArrayRequest>(json::parse(R"({"arrays":[0],"limit":2})")).status().message(),
      "\"arrays\" must hold positive job ids");
  // hold and release take arrays as cancel does; without them they read and write as always.
  EXPECT_EQ(ToJson(HoldRequest{{4}, {}}), json::parse(R"({"op":"hold","ids":[4]})"));
  EXPECT_EQ(ToJson(ReleaseRequest{{}, {12}}),
            json::parse(R"({"op":"release","ids":[],"arrays":[12]})"));
  EXPECT_EQ(FromJson<HoldRequest>(json::parse(R"({"arrays":[12],"ids":[3]})"))->arrays,
            std::vector<JobId>{12});
  EXPECT_EQ(FromJson<ReleaseRequest>(json::parse(R"({"arrays":[12]})"))->arrays,
            std::vector<JobId>{12});
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

TEST(ApiCodecTest, AttachLeaseNeedsAPositivePidAndAUid) {
  EXPECT_FALSE(FromJson<AttachLeaseRequest>(json{{"op", "attach_lease"}, {"id", 2}}).ok());
  EXPECT_FALSE(
      FromJson<AttachLeaseRequest>(json{{"op", "attach_lease"}, {"id", 2}, {"pid", -1}}).ok());
  EXPECT_FALSE(FromJson<AttachLeaseRequest>(
                   json{{"op", "attach_lease"}, {"id", 2}, {"pid", 5}, {"container_uid", -3}})
                   .ok());
  EXPECT_FALSE(FromJson<OpenLeaseRequest>(json{{"op", "open_lease"}}).ok());
  EXPECT_FALSE(
      FromJson<OpenLeaseRequest>(json{{"op", "open_lease"}, {"request", {{"gpus", "two"}}}}).ok());
}

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
  EXPECT_FALSE(ToJson(QueueRequest{}).contains("states"))
      << "a request without selections reads as before";
  json repeated = json{{"states", std::vector<std::string>(100000, "pending")}};
  EXPECT_EQ(FromJson<QueueRequest>(repeated)->states, std::vector<JobState>{JobState::kPending})
      << "a state named many times is one (every job is compared with each)";
  QueueRequest with_start;
  with_start.start = true;
  EXPECT_TRUE(FromJson<QueueRequest>(ToJson(with_start))->start);
  EXPECT_FALSE(ToJson(QueueRequest{}).contains("start"));
  QueueRequest with_lists;
  with_lists.enforcement = true;
  EXPECT_TRUE(FromJson<QueueRequest>(ToJson(with_lists))->enforcement);
  EXPECT_FALSE(ToJson(QueueRequest{}).contains("enforcement"));
  QueueReply reply;
  reply.starts = {{2, 1795845127284, ""}, {3, std::nullopt, "held"}};
  json r = ToJson(reply);
  EXPECT_EQ(r["starts"],
            json::parse(R"([{"id":2,"start_ms":1795845127284},{"id":3,"why":"held"}])"));
  auto decoded = FromJson<QueueReply>(r);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->starts.at(0).start_ms, std::optional<int64_t>(1795845127284));
  EXPECT_EQ(decoded->starts.at(1).why, "held");
  EXPECT_FALSE(ToJson(QueueReply{}).contains("starts"))
      << "a reply without estimates reads as before";
  json many_ids = json{{"ids", std::vector<JobId>(kQueueMaxIds + 1, 3)}};
  for (const json& bad :
       {json{{"states", {"bogus"}}}, json{{"states", "pending"}}, many_ids, json{{"ids", {0}}},
        json{{"names", std::vector<std::string>(kQueueMaxNames + 1, "n")}}, json{{"names", {1}}}}) {
    EXPECT_EQ(FromJson<QueueRequest>(bad).status().code(), Code::kInvalidArgument) << bad.dump();
  }
}

}  // namespace
}  // namespace pinpoint
