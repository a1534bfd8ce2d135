// A job's output bound (max_output_bytes, docs/security.md): the real pinpointd, shim and CLI.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "integration/harness.h"

namespace pinpoint::testing {
namespace {

using nlohmann::json;

// A job that writes without end is ended at the bound, says why where its user looks, and its
// output stays readable, cut there.
TEST(OutputLimitTest, AJobPastItsOutputBoundIsEndedAndSaysWhy) {
  Harness h("simulated:h100x2", "\"max_output_bytes\": \"1MiB\"");
  h.StartDaemon();
  CliResult run = h.Cli({"--json", "submit", "--wait", "--", "yes", "a line"});
  EXPECT_NE(run.exit_code, 0) << run.out << run.err;
  json job = json::parse(run.out, nullptr, false);
  ASSERT_TRUE(job.is_object()) << run.out << run.err;
  int64_t id = job["id"].get<int64_t>();
  json shown = json::parse(h.Cli({"--json", "show", std::to_string(id)}).out, nullptr, false);
  ASSERT_TRUE(shown.is_object());
  EXPECT_EQ(shown["job"]["state"], "failed");
  EXPECT_EQ(shown["job"]["reason"], "output-exceeded") << shown.dump();
  EXPECT_NE(shown["job"]["detail"].get<std::string>().find("passed 1MiB (max_output_bytes)"),
            std::string::npos)
      << shown.dump();
  CliResult logs = h.Cli({"logs", std::to_string(id)});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_LE(logs.out.size(), 1u << 20);
  EXPECT_NE(logs.out.find("a line\n"), std::string::npos);
  CliResult errors = h.Cli({"logs", "--stderr", std::to_string(id)});
  EXPECT_NE(errors.out.find("pinpoint: output cut at 1MiB (max_output_bytes)"), std::string::npos)
      << errors.out;
  CliResult small = h.Cli({"submit", "--wait", "--", "echo", "fine"});
  EXPECT_EQ(small.exit_code, 0) << small.err;
}

}  // namespace
}  // namespace pinpoint::testing
