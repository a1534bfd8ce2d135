// The rules on running jobs' output on the state disk (output_bound.h), table by table: who is
// ended, how much each keeps, and that a job which printed a line never pays for the space
// another took.
#include "daemon/jobs/output_bound.h"

#include <gtest/gtest.h>

namespace pinpoint::daemon {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

struct Case {
  const char* name;
  std::vector<OutputHolder> holders;
  OutputLimits limits;
  std::optional<launch::DiskSpace> space;
  std::vector<std::pair<JobId, uint64_t>> ended;  // id, keep_bytes, in order
  std::vector<std::string> settings;              // of each, in order
};

TEST(OutputBoundTest, WhoIsEndedAndWhatEachKeeps) {
  const uint32_t kAttacker = 1001, kBystander = 1002;
  Case cases[] = {
      {"within every bound: nobody",
       {{1, kAttacker, 10 * kMiB}, {2, kBystander, 4096}},
       {16 * kMiB, 64 * kMiB, 64 * kMiB},
       launch::DiskSpace{1024 * kMiB, 4096 * kMiB},
       {},
       {}},
      {"a job past max_output_bytes (counted in blocks): ended, cut to the bound",
       {{1, kAttacker, 253 * kMiB}, {2, kBystander, 4096}},
       {16 * kMiB, 0, 0},
       std::nullopt,
       {{1, 16 * kMiB}},
       {"max_output_bytes"}},
      {"eight jobs of one user at 48 MiB past 256 MiB: the largest ended, each cut by what is "
       "still over (ties: the later job first)",
       {{1, kAttacker, 48 * kMiB},
        {2, kAttacker, 48 * kMiB},
        {3, kAttacker, 48 * kMiB},
        {4, kAttacker, 48 * kMiB},
        {5, kAttacker, 48 * kMiB},
        {6, kAttacker, 48 * kMiB},
        {7, kAttacker, 48 * kMiB},
        {8, kAttacker, 50 * kMiB},
        {9, kBystander, 4096}},
       {64 * kMiB, 256 * kMiB, 0},
       std::nullopt,
       {{8, 0}, {7, 0}, {6, 16 * kMiB}},
       {"max_user_output_bytes", "max_user_output_bytes", "max_user_output_bytes"}},
      {"root's jobs are not bounded per user",
       {{1, 0, 48 * kMiB}, {2, 0, 48 * kMiB}},
       {0, 64 * kMiB, 0},
       std::nullopt,
       {},
       {}},
      {"a job cut by max_output_bytes counts what it keeps toward its user's bound",
       {{1, kAttacker, 100 * kMiB}, {2, kAttacker, 15 * kMiB}},
       {16 * kMiB, 30 * kMiB, 0},
       std::nullopt,
       {{1, 16 * kMiB}, {2, 14 * kMiB}},
       {"max_output_bytes", "max_user_output_bytes"}},
      {"the disk short of the reserve: the big writer pays (the missing 4 MiB plus the reserve "
       "once more), never the job that printed a line",
       {{1, kBystander, 4096}, {2, kAttacker, 200 * kMiB}},
       {0, 0, 64 * kMiB},
       launch::DiskSpace{60 * kMiB, 4096 * kMiB},
       {{2, 200 * kMiB - 68 * kMiB}},
       {"state_reserve_bytes"}},
      {"the reserve in force is a tenth of a small filesystem",
       {{1, kAttacker, 60 * kMiB}, {2, kBystander, 4096}},
       {0, 0, 64 * kMiB},
       launch::DiskSpace{0, 64 * kMiB},
       {{1, 60 * kMiB - 2 * (64 * kMiB / 10)}},
       {"state_reserve_bytes"}},
      {"of the user who took the most, the largest first, until what is missing is freed",
       {{1, kAttacker, 3 * kMiB},
        {2, kAttacker, 2 * kMiB},
        {3, 1003, 4 * kMiB},
        {4, kBystander, 4096}},
       {0, 0, 4 * kMiB},
       launch::DiskSpace{0, 4096 * kMiB},
       {{1, 0}, {2, 0}},
       {"state_reserve_bytes", "state_reserve_bytes"}},
      {"the disk filled by what no running job holds: nobody under the floor pays",
       {{1, kBystander, 4096}, {2, 1003, 8192}},
       {0, 0, 64 * kMiB},
       launch::DiskSpace{0, 4096 * kMiB},
       {},
       {}},
      {"what earlier rules' cuts free counts toward the reserve",
       {{1, kAttacker, 100 * kMiB}, {2, kBystander, 4096}},
       {16 * kMiB, 0, 64 * kMiB},
       launch::DiskSpace{0, 4096 * kMiB},
       {{1, 16 * kMiB}},
       {"max_output_bytes"}},
      {"free space unknown: the reserve rule is not applied",
       {{1, kAttacker, 100 * kMiB}},
       {0, 0, 64 * kMiB},
       std::nullopt,
       {},
       {}},
  };
  for (const Case& c : cases) {
    std::vector<OutputEnd> ends = DecideOutputEnds(c.holders, c.limits, c.space);
    std::vector<std::pair<JobId, uint64_t>> got;
    std::vector<std::string> settings;
    for (const OutputEnd& e : ends) {
      got.emplace_back(e.id, e.keep_bytes);
      settings.push_back(e.setting);
      EXPECT_NE(e.detail.find(e.setting), std::string::npos) << c.name << ": " << e.detail;
    }
    EXPECT_EQ(got, c.ended) << c.name;
    EXPECT_EQ(settings, c.settings) << c.name;
  }
}

TEST(OutputBoundTest, EachDetailSaysWhatWasTakenAndWhatWasKept) {
  auto user = DecideOutputEnds({{1, 1001, 48 * kMiB}, {2, 1001, 48 * kMiB}}, {0, 64 * kMiB, 0},
                               std::nullopt);
  ASSERT_EQ(user.size(), 1u);
  EXPECT_EQ(user[0].detail,
            "the output of its user's running jobs passed 64MiB (max_user_output_bytes): they "
            "took 96MiB on disk together; pinpoint ended this job, their largest, and cut its "
            "output to 16MiB");
  auto reserve = DecideOutputEnds({{1, 1001, 200 * kMiB}}, {0, 0, 64 * kMiB},
                                  launch::DiskSpace{60 * kMiB, 4096 * kMiB});
  ASSERT_EQ(reserve.size(), 1u);
  EXPECT_EQ(reserve[0].detail,
            "the state directory's filesystem had 60MiB free, less than the 64MiB kept for the "
            "job store (state_reserve_bytes), and its user's running jobs held the most output "
            "(200MiB on disk); pinpoint ended this job, their largest, and cut its output to "
            "132MiB");
}

TEST(OutputBoundTest, TheReserveIsATenthOfASmallFilesystemAtMost) {
  EXPECT_EQ(ReserveInForce(64 * kMiB, 4096 * kMiB), 64 * kMiB);
  EXPECT_EQ(ReserveInForce(64 * kMiB, 64 * kMiB), 64 * kMiB / 10);
  EXPECT_EQ(ReserveInForce(0, 64 * kMiB), 0u);
}

}  // namespace
}  // namespace pinpoint::daemon
