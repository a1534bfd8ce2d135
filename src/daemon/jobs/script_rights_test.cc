// ScriptRights (script_rights.h): whose rights judge a submit's field, and the line that says so.
#include "daemon/jobs/script_rights.h"

#include <gtest/gtest.h>

namespace pinpoint::daemon {
namespace {

using F = ScriptField;

api::Caller Uid(uint32_t uid) {
  api::Caller c;
  c.uid = c.gid = uid;
  c.pid = 77;
  return c;
}

TEST(ScriptRightsTest, AScriptsFieldIsJudgedAsTheJobsUserATypedOneAsTheCaller) {
  ScriptOrigins from = {{F::kPriority, "job.sh:3"}};
  ScriptRights rights(Uid(0), 1000, 1000, "alice", from);
  EXPECT_EQ(rights.For({F::kPriority}).uid, 1000u);
  EXPECT_EQ(rights.For({F::kPriority}).pid, 77) << "the caller's pid";
  EXPECT_EQ(rights.For({F::kHold}).uid, 0u) << "not from the script: root's";
  EXPECT_EQ(rights.For({F::kHold, F::kPriority}).uid, 1000u) << "any of them from the script";
  ScriptRights own(Uid(1000), 1000, 1000, "alice", from);
  EXPECT_EQ(own.For({F::kPriority}).uid, 1000u) << "a user's own script: the user, as always";
}

TEST(ScriptRightsTest, ExplainNamesThePlaceAndWhoseRights) {
  ScriptOrigins from = {{F::kPriority, "job.sh:3"}};
  ScriptRights rights(Uid(0), 1000, 1000, "alice", from);
  Status s = rights.Explain(PermissionDenied("priority 9 is above 0"), {F::kPriority});
  EXPECT_EQ(s.code(), Code::kPermissionDenied);
  EXPECT_EQ(
      s.message(),
      "job.sh:3: priority 9 is above 0 (a job script's directives carry the rights of the user "
      "the job runs as, alice, not the submitter's)");
  EXPECT_EQ(rights.Explain(PermissionDenied("x"), {F::kHold}).message(), "x") << "typed: as it was";
  EXPECT_TRUE(rights.Explain(Status::Ok(), {F::kPriority}).ok());
  ScriptRights own(Uid(1000), 1000, 1000, "alice", from);
  EXPECT_EQ(own.Explain(PermissionDenied("priority 9 is above 0"), {F::kPriority}).message(),
            "job.sh:3: priority 9 is above 0");
}

}  // namespace
}  // namespace pinpoint::daemon
