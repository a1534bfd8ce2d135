#include "common/companion.h"

#include <gtest/gtest.h>

#include <set>

namespace pinpoint {
namespace {

auto Having(std::set<std::string> files) {
  return [files](const std::string& path) { return files.count(path) > 0; };
}

TEST(CompanionPathTest, BesideTheProgramFirst) {
  EXPECT_EQ(
      CompanionPathFor("/usr/bin/pinpointd", "pinpoint-shim",
                       Having({"/usr/bin/pinpoint-shim", "/usr/libexec/pinpoint/pinpoint-shim"})),
      "/usr/bin/pinpoint-shim");
  EXPECT_EQ(CompanionPathFor("/src/build/pinpointd", "pinpoint-shim",
                             Having({"/src/build/pinpoint-shim"})),
            "/src/build/pinpoint-shim");
}

TEST(CompanionPathTest, LibexecOfTheSamePrefix) {
  EXPECT_EQ(CompanionPathFor("/usr/bin/pinpointd", "pinpoint-shim",
                             Having({"/usr/libexec/pinpoint/pinpoint-shim"})),
            "/usr/libexec/pinpoint/pinpoint-shim");
  EXPECT_EQ(CompanionPathFor("/opt/pp/bin/pinpoint", "pinpoint-slurm",
                             Having({"/opt/pp/libexec/pinpoint/pinpoint-slurm",
                                     "/usr/libexec/pinpoint/pinpoint-slurm"})),
            "/opt/pp/libexec/pinpoint/pinpoint-slurm");
}

TEST(CompanionPathTest, MissingNamesThePathBesideTheProgram) {
  EXPECT_EQ(CompanionPathFor("/usr/bin/pinpointd", "pinpoint-shim", Having({})),
            "/usr/bin/pinpoint-shim");
  // Only a bin/ directory has a libexec/ beside it.
  EXPECT_EQ(CompanionPathFor("/srv/pinpointd", "pinpoint-shim",
                             Having({"/libexec/pinpoint/pinpoint-shim"})),
            "/srv/pinpoint-shim");
}

}  // namespace
}  // namespace pinpoint
