// RecentFailures (recent_failures.h): each user's launch failures kept apart and bounded, so that
// one user's many failures never push out another's within kRecentFailureMs.
#include "daemon/node/recent_failures.h"

#include <gtest/gtest.h>

namespace pinpoint::daemon {
namespace {

constexpr uint32_t kA = 1000;
constexpr uint32_t kB = 1001;

std::vector<JobId> Ids(const RecentFailures& kept, std::optional<uint32_t> uid, int64_t now_ms) {
  std::vector<JobId> ids;
  for (const RecentFailure* f : kept.Of(uid, now_ms)) ids.push_back(f->id);
  return ids;
}

TEST(RecentFailuresTest, OneUsersFailuresNeverPushOutAnothers) {
  RecentFailures kept;
  kept.Add({1, kB, 0, "b-job", 1000}, 1000);
  for (JobId id = 2; id < 2 + 3 * static_cast<JobId>(kRecentFailuresPerUser); ++id)
    kept.Add({id, kA, 0, "", 2000}, 2000);
  EXPECT_EQ(Ids(kept, kB, 3000), std::vector<JobId>{1}) << "B's failure is still listed";
  std::vector<JobId> a = Ids(kept, kA, 3000);
  ASSERT_EQ(a.size(), kRecentFailuresPerUser) << "A keeps A's newest, no more";
  EXPECT_EQ(a.back(), 1 + 3 * static_cast<JobId>(kRecentFailuresPerUser));
  EXPECT_EQ(Ids(kept, std::nullopt, 3000).size(), kRecentFailuresPerUser + 1) << "root sees all";
}

TEST(RecentFailuresTest, AUsersNamesAreBoundedInBytes) {
  RecentFailures kept;
  std::string name(kMaxNameBytes, 'n');
  for (JobId id = 1; id <= static_cast<JobId>(kRecentFailuresPerUser); ++id)
    kept.Add({id, kA, 0, name, 0}, 0);
  EXPECT_LE(kept.BytesOf(kA), kRecentFailureBytesPerUser);
  size_t most = kRecentFailureBytesPerUser / (64 + kMaxNameBytes);
  EXPECT_EQ(Ids(kept, kA, 0).size(), most) << "long names: fewer of them";
  EXPECT_EQ(Ids(kept, kA, 0).back(), static_cast<JobId>(kRecentFailuresPerUser))
      << "the newest kept";
}

TEST(RecentFailuresTest, WhatEndedLongerAgoIsForgottenWithItsUser) {
  RecentFailures kept;
  kept.Add({1, kA, 0, "", 0}, 0);
  kept.Add({2, kB, 7, "", 10}, 10);
  EXPECT_EQ(Ids(kept, std::nullopt, kRecentFailureMs), (std::vector<JobId>{1, 2}));
  EXPECT_EQ(Ids(kept, std::nullopt, kRecentFailureMs + 1), std::vector<JobId>{2})
      << "listed only within the window";
  kept.Add({3, kB, 0, "", kRecentFailureMs + 1}, kRecentFailureMs + 1);
  EXPECT_EQ(kept.users(), 1u) << "A, with nothing recent, is no longer kept";
  EXPECT_EQ(kept.BytesOf(kA), 0u);
}

}  // namespace
}  // namespace pinpoint::daemon
