// Attacks on a submit's fields that a job script gave (the wire's "from_script"; docs/security.md
// "A job script's directives"): root submitting alice's script `--as-user alice` must take from
// its directives no more than alice could ask for on her own, while what root typed on the
// command line keeps root's rights. Through the Service, in the wire form the CLI sends.
#include <gtest/gtest.h>

#include "daemon/jobs/fake_users.h"
#include "daemon/service/service_fixture.h"
#include "pinpoint/api_codec.h"

namespace pinpoint::daemon {
namespace {

using nlohmann::json;

constexpr uint32_t kAlice = 1000;
constexpr uint32_t kBob = 1001;

class SubmitScriptTest : public ServiceFixture {
 protected:
  void SetUp() override {
    users_.AddUser(0, 0, "root");
    users_.AddUser(kAlice, kAlice, "alice");
    users_.AddUser(kBob, kBob, "bob");
    options_.inventory = TwoGpus();
    Restart(options_, &users_);
    alice_.uid = alice_.gid = kAlice;
    bob_.uid = bob_.gid = kBob;
  }
  // A submit of alice's job.sh: as_user alice when root sends it, `change` applied to it and to
  // its request, `from_script` the fields its directives gave (field word -> place).
  json Submit(const api::Caller& caller, const std::function<void(SubmitRequest&)>& change,
              const std::map<std::string, std::string>& from_script = {}) {
    SubmitRequest op;
    op.request.argv = {"/home/alice/job.sh"};
    op.request.cwd = "/home/alice";
    if (caller.IsRoot()) op.request.as_user = "alice";
    change(op);
    json j = ToJson(op);
    for (const auto& [field, place] : from_script) j["from_script"][field] = place;
    std::optional<json> reply = service_->Handle(caller, j, /*conn=*/1);
    return reply ? *reply : json{{"deferred", true}};
  }
  static std::string Message(const json& reply) {
    return reply.value("error", json::object()).value("message", "");
  }
  static std::string Code(const json& reply) {
    return reply.value("error", json::object()).value("code", "");
  }

  FakeUserDirectory users_;
  NodeOptions options_;
  api::Caller root_;  // uid 0
  api::Caller alice_, bob_;
};

TEST_F(SubmitScriptTest, APriorityFromTheScriptIsJudgedAsItsUserAndRootsOwnIsNot) {
  auto priority = [](SubmitRequest& op) { op.request.priority = 1000000; };
  json own = Submit(alice_, priority, {{"priority", "job.sh:3"}});
  json scripted = Submit(root_, priority, {{"priority", "job.sh:3"}});
  ASSERT_FALSE(scripted.value("ok", true)) << scripted.dump();
  EXPECT_EQ(Code(scripted), Code(own)) << "refused as alice's own submit is";
  EXPECT_EQ(Code(scripted), "permission_denied");
  EXPECT_EQ(Message(scripted).rfind(
                "job.sh:3: priority 1000000 is above 0, the most a user may ask for", 0),
            0u)
      << Message(scripted);
  EXPECT_NE(Message(scripted).find("the rights of the user the job runs as, alice"),
            std::string::npos)
      << Message(scripted);
  EXPECT_EQ(Message(scripted).find('\n'), std::string::npos);
  EXPECT_TRUE(store_->List({})->empty()) << "nothing stored";

  json typed = Submit(root_, priority);
  ASSERT_TRUE(typed.value("ok", false)) << typed.dump();
  EXPECT_EQ(typed["job"]["request"]["priority"], 1000000)
      << "root's command line keeps root's rights";
  EXPECT_EQ(typed["job"]["user"], "alice");

  // A field the script gave that needs no right beyond alice's: accepted.
  json lower = Submit(root_, [](SubmitRequest& op) { op.request.priority = -5; },
                      {{"priority", "job.sh:3"}});
  EXPECT_TRUE(lower.value("ok", false)) << lower.dump();
  // A user named in priority_users may ask from her script what she may ask herself.
  options_.admission.priority.priority_users = {"alice"};
  Restart(options_, &users_);
  json named = Submit(root_, priority, {{"priority", "job.sh:3"}});
  EXPECT_TRUE(named.value("ok", false)) << named.dump();
}

TEST_F(SubmitScriptTest, AHoldFromTheScriptIsTheUsersHoldNotRoots) {
  auto hold = [](SubmitRequest& op) { op.hold = true; };
  json scripted = Submit(root_, hold, {{"hold", "job.sh:2"}});
  ASSERT_TRUE(scripted.value("ok", false)) << scripted.dump();
  EXPECT_EQ(scripted["job"]["hold"], "user") << "alice's script holds as alice: she may release it";
  JobId id = scripted["job"]["id"].get<JobId>();
  EXPECT_TRUE(node_->ReleaseJobs(alice_, {id}).front().ok());

  json typed = Submit(root_, hold);
  ASSERT_TRUE(typed.value("ok", false)) << typed.dump();
  EXPECT_EQ(typed["job"]["hold"], "root") << "root's --hold on the command line is an admin hold";
}

TEST_F(SubmitScriptTest, DependenciesFromTheScriptNameOnlyTheUsersJobs) {
  json bobs = Submit(bob_, [](SubmitRequest&) {});
  ASSERT_TRUE(bobs.value("ok", false)) << bobs.dump();
  JobId bob_job = bobs["job"]["id"].get<JobId>();
  auto after_bob = [&](SubmitRequest& op) { op.request.afterok = {bob_job}; };
  json own = Submit(alice_, after_bob, {{"afterok", "job.sh:4"}});
  json scripted = Submit(root_, after_bob, {{"afterok", "job.sh:4"}});
  ASSERT_FALSE(scripted.value("ok", true)) << scripted.dump();
  EXPECT_EQ(Code(scripted), Code(own));
  EXPECT_EQ(Message(scripted).rfind("job.sh:4: no job " + std::to_string(bob_job), 0), 0u)
      << Message(scripted);
  json typed = Submit(root_, after_bob);
  EXPECT_TRUE(typed.value("ok", false)) << "root may wait on any job: " << typed.dump();
}

TEST_F(SubmitScriptTest, AsUserFromTheScriptIsRefusedAsTheUsersWouldBe) {
  // root ran `pinpoint submit job.sh` and alice's script says `#PINPOINT --as-user alice`.
  json scripted = Submit(root_, [](SubmitRequest&) {}, {{"as_user", "job.sh:2"}});
  ASSERT_FALSE(scripted.value("ok", true)) << scripted.dump();
  EXPECT_EQ(Code(scripted), "permission_denied");
  EXPECT_EQ(Message(scripted).rfind("job.sh:2: only root may submit a job as another user", 0), 0u)
      << Message(scripted);
  EXPECT_TRUE(Submit(root_, [](SubmitRequest&) {}).value("ok", false)) << "typed by root";
}

TEST_F(SubmitScriptTest, AnArrayFromTheScriptCountsAgainstTheUsersCaps) {
  options_.admission.max_jobs_per_user = 2;
  Restart(options_, &users_);
  auto three = [](SubmitRequest& op) { op.array = ParseArraySpec("1-3").value(); };
  json own = Submit(alice_, three, {{"array", "job.sh:5"}});
  json scripted = Submit(root_, three, {{"array", "job.sh:5"}});
  ASSERT_FALSE(scripted.value("ok", true)) << scripted.dump();
  EXPECT_EQ(Code(scripted), Code(own));
  EXPECT_EQ(Code(scripted), "unavailable");
  EXPECT_EQ(Message(scripted).rfind("job.sh:5: ", 0), 0u) << Message(scripted);
  EXPECT_NE(Message(scripted).find("max_jobs_per_user"), std::string::npos) << Message(scripted);
  EXPECT_TRUE(Submit(root_, three).value("ok", false))
      << "root's own --array is not counted per user";
}

TEST_F(SubmitScriptTest, TextFromTheScriptCountsAgainstTheUsersBytes) {
  options_.admission.max_user_request_bytes = 8192;
  Restart(options_, &users_);
  auto big = [](SubmitRequest& op) {
    op.request.output_path = std::string(4000, 'o');
    op.array = ParseArraySpec("1-4").value();
  };
  json scripted = Submit(root_, big, {{"output_path", "job.sh:6"}});
  ASSERT_FALSE(scripted.value("ok", true)) << scripted.dump();
  EXPECT_EQ(Code(scripted), Code(Submit(alice_, big, {{"output_path", "job.sh:6"}})));
  EXPECT_NE(Message(scripted).find("max_user_request_bytes"), std::string::npos)
      << Message(scripted);
  EXPECT_TRUE(Submit(root_, big).value("ok", false));
}

// The wire's own rules for "from_script": known field words, places of one printable line.
TEST_F(SubmitScriptTest, FromScriptIsCheckedOnTheWire) {
  auto none = [](SubmitRequest&) {};
  json unknown = Submit(root_, none, {{"gpus", "job.sh:1"}});
  EXPECT_EQ(Code(unknown), "invalid_argument") << unknown.dump();
  json forged = Submit(root_, none, {{"priority", "job.sh:1\nforged line"}});
  EXPECT_EQ(Code(forged), "invalid_argument") << forged.dump();
  json empty = Submit(root_, none, {{"priority", ""}});
  EXPECT_EQ(Code(empty), "invalid_argument") << empty.dump();
  json longest = Submit(root_, none, {{"priority", std::string(kMaxScriptPlaceBytes + 1, 'x')}});
  EXPECT_EQ(Code(longest), "invalid_argument") << longest.dump();
  EXPECT_TRUE(store_->List({})->empty());
}

}  // namespace
}  // namespace pinpoint::daemon
