// The JSON the daemon puts on the socket, pinned: one session through the Service (every op, a
// deferred reply, a record shown to its owner and to someone else, an error) on a node of fakes,
// each reply compared with its golden file in tests/golden/api/. The requests sent are the golden
// request files, the ones the typed client's codec must produce (src/codec/api_codec_test.cc).
// PINPOINT_UPDATE_GOLDEN=1 rewrites the reply files from what the daemon sends.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/version.h"
#include "daemon/service/service_fixture.h"

namespace pinpoint::daemon {
namespace {

using nlohmann::json;

std::string GoldenPath(const std::string& name) {
  return std::string(PINPOINT_SOURCE_DIR) + "/tests/golden/api/" + name + ".json";
}

std::string ReadGolden(const std::string& name) {
  std::ifstream in(GoldenPath(name));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The reply as the golden file holds it (pretty, one key order), or a rewrite of the file.
void ExpectGolden(const std::string& name, const json& reply) {
  std::string text = reply.dump(2) + "\n";
  const char* update = std::getenv("PINPOINT_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(GoldenPath(name)) << text;
    return;
  }
  EXPECT_EQ(text, ReadGolden(name))
      << name << ": the daemon's reply is no longer what the wire carried";
}

class ServiceWireTest : public ServiceFixture {
 protected:
  void SetUp() override {
    other_.uid = 4343;
    other_.gid = 4343;
    NodeOptions o;
    o.inventory = TwoGpus();
    o.identity.backend_kind = "simulated:test";
    o.identity.simulated = true;
    o.identity.driver_version = "simulated";
    Restart(o);
    service_->set_reply_sink(
        [this](api::ConnId, const json& reply) { deferred_.push_back(reply); });
  }
  // The reply to the golden request `request_name`, sent by `caller`; null when deferred.
  json Send(const std::string& request_name, const api::Caller& caller) {
    json request = json::parse(ReadGolden(request_name));
    std::optional<json> reply = service_->Handle(caller, request, /*conn=*/1);
    return reply ? *reply : json();
  }
  void Step() {
    clock_.AdvanceMs(1500);
    service_->JobsEnded(node_->Step());
  }

  api::Caller& owner_ = caller_;
  api::Caller other_;
  std::vector<json> deferred_;
};

TEST_F(ServiceWireTest, EveryOpsReplyIsWhatTheWireCarries) {
  json version = Send("version.request", owner_);
  EXPECT_EQ(version["version"], VersionText());  // with its revision, as pinpoint --version
  EXPECT_EQ(version["schema"], store::JobStore::kCurrentVersion);
  version["version"] = "0.1.0";  // the golden file outlives version and schema bumps
  version["schema"] = 3;
  ExpectGolden("version.reply", version);

  ExpectGolden("submit.reply", Send("submit.request", owner_));
  Step();  // the job starts on device 0
  ExpectGolden("queue.reply", Send("queue.request", owner_));
  ExpectGolden("gpus.reply", Send("gpus.request", owner_));
  ExpectGolden("show.reply", Send("show.request", owner_));
  ExpectGolden("show_hidden.reply", Send("show.request", other_));

  EXPECT_TRUE(Send("wait.request", other_).is_null())
      << "a running job's wait is answered when it ends";
  ASSERT_EQ(mkdir((dir_.path() + "/jobs").c_str(), 0755) == 0 || errno == EEXIST, true);
  ASSERT_EQ(mkdir((dir_.path() + "/jobs/1").c_str(), 0755) == 0 || errno == EEXIST, true);
  std::ofstream(dir_.path() + "/jobs/1/stdout") << "hello\n";
  launch::ExitStatus exited;
  exited.kind = launch::ExitStatus::Kind::kExited;
  exited.exit_code = 0;
  launcher_.Finish(1, exited);
  Step();
  ASSERT_EQ(deferred_.size(), 1u);
  ExpectGolden("wait.reply", deferred_[0]);
  ExpectGolden("wait_ids.reply", Send("wait_ids.request", owner_));  // ended: answered at once

  ExpectGolden("logs.reply", Send("logs.request", owner_));
  ExpectGolden("cancel.reply", Send("cancel.request", owner_));
  ExpectGolden("error.reply", Send("unknown.request", owner_));

  ExpectGolden("submit_held.reply", Send("submit_held.request", owner_));
  Step();
  ExpectGolden("hold.reply", Send("hold.request", owner_));
  ExpectGolden("release.reply", Send("release.request", owner_));
  // A lease (job 3): opened by its owner, attached by root's hook, closed once its cgroup is empty.
  ExpectGolden("open_lease.reply", Send("open_lease.request", owner_));
  containers_.SetCgroup(777, std::string("0::/machine/libpod-c1.scope"));
  containers_.SetProcesses("0::/machine/libpod-c1.scope", std::vector<int64_t>{777});
  api::Caller root;
  ExpectGolden("attach_lease.reply", Send("attach_lease.request", root));
  containers_.SetProcesses("0::/machine/libpod-c1.scope", std::vector<int64_t>{});
  ExpectGolden("close_lease.reply", Send("close_lease.request", owner_));
  // A time limit and dependencies (job 4): on jobs 1 (completed) and 2 (pending), the owner's.
  ExpectGolden("submit_after.reply", Send("submit_after.request", owner_));
  // A job array (jobs 5 to 7, at most 2 running): the submit's reply, a queue that shows its
  // tasks, and the cancel of the array's id reaching the three.
  ExpectGolden("submit_array.reply", Send("submit_array.request", owner_));
  Step();
  ExpectGolden("queue_array.reply", Send("queue.request", owner_));
  ExpectGolden("update_array.reply", Send("update_array.request", owner_));  // its %K from 2 to 3
  // Job 4, still pending, gets a new name and time limit; job 1 has ended.
  ExpectGolden("update.reply", Send("update.request", owner_));
  ExpectGolden("cancel_array.reply", Send("cancel_array.request", owner_));
}

}  // namespace
}  // namespace pinpoint::daemon
