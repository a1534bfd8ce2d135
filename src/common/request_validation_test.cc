// ValidateRequest against requests a hostile client sends (it does not use our CLI): bytes that
// mean something else in the fields pinpoint stores, shows or hands to the kernel.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pinpoint/job.h"

namespace pinpoint {
namespace {

using nlohmann::json;

JobRequest Good() {
  JobRequest r;
  r.name = "train résnet 50";  // printable UTF-8 is fine
  r.argv = {"python", "train.py", "--lr", "1e-3", "multi\nline is fine in argv"};
  r.cwd = "/home/alice";
  r.env = {{"PATH", "/bin"}, {"BASH_FUNC_module%%", "() { eval x\n}"}, {"EMPTY", ""}};
  return r;
}

// The request as the daemon gets it: JSON text, decoded by RequestFromJson.
Status ValidateFromWire(const JobRequest& r) {
  auto decoded = RequestFromJson(json::parse(ToJson(r).dump()));
  if (!decoded.ok()) return decoded.status();
  return ValidateRequest(*decoded);
}

void ExpectRejected(const JobRequest& r, const std::string& field) {
  Status s = ValidateFromWire(r);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << field;
  EXPECT_EQ(s.message().rfind(field, 0), 0u) << "error names the field: " << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
}

TEST(RequestValidationTest, GoodRequestPasses) { EXPECT_TRUE(ValidateFromWire(Good()).ok()); }

TEST(RequestValidationTest, NameRejectsEveryControlByteAndTerminalSequence) {
  std::vector<std::string> bad;
  for (int c = 0; c < 0x20; ++c) bad.push_back(std::string("job") + static_cast<char>(c) + "x");
  bad.push_back("job\x7f");
  bad.push_back("job\x1b]0;owned\x07");  // OSC: sets the terminal title
  bad.push_back("job\x1b[2J");           // CSI: clears the screen
  bad.push_back(
      "job\xc2\x9b"
      "2J");  // C1 CSI, as UTF-8
  bad.push_back(
      "job\xe2\x80\xae"
      "gpj.exe");  // right-to-left override
  bad.push_back(
      "job\xe2\x80\xa8"
      "7 root");  // line separator
  for (const auto& name : bad) {
    JobRequest r = Good();
    r.name = name;
    ExpectRejected(r, "name");
  }
  JobRequest r = Good();
  r.name = "job\nID 1 root running";  // a forged row in root's `pinpoint queue`
  ExpectRejected(r, "name");
}

TEST(RequestValidationTest, InvalidUtf8NameIsRejected) {
  JobRequest r = Good();
  r.name = "job\xff";  // cannot come through JSON text; checked on the decoded request
  EXPECT_EQ(ValidateRequest(r).code(), Code::kInvalidArgument);
  r.name = "job\xc0\x8a";  // overlong newline
  EXPECT_EQ(ValidateRequest(r).code(), Code::kInvalidArgument);
}

TEST(RequestValidationTest, NameAndAsUserAreBounded) {
  JobRequest r = Good();
  r.name = std::string(kMaxNameBytes, 'n');
  EXPECT_TRUE(ValidateFromWire(r).ok());
  r.name += "n";
  ExpectRejected(r, "name");
  r = Good();
  r.as_user = "alice\n";
  ExpectRejected(r, "as_user");
}

TEST(RequestValidationTest, NulInArgvCwdOrEnvValueIsRejected) {
  JobRequest r = Good();
  r.argv[1] = std::string("train.py\0--rm-rf", 16);
  ExpectRejected(r, "argv[1]");
  r = Good();
  r.cwd = std::string("/tmp\0/home/alice", 16);
  ExpectRejected(r, "cwd");
  r = Good();
  r.env["LD_PRELOAD"] = std::string("\0/evil.so", 9);
  ExpectRejected(r, "env[LD_PRELOAD]");
}

TEST(RequestValidationTest, EnvNamesAreNonEmptyPrintableAsciiWithoutEquals) {
  for (const std::string& key :
       {std::string(), std::string("A=B"), std::string("A B"), std::string("A\nB"),
        std::string("A\0B", 3), std::string("\x1b[2J"), std::string("caf\xc3\xa9"),
        std::string(kMaxEnvNameBytes + 1, 'A')}) {
    JobRequest r = Good();
    r.env[key] = "v";
    ExpectRejected(r, "env: variable name");
  }
}

TEST(RequestValidationTest, CountsAndLengthsAreBounded) {
  JobRequest r = Good();
  r.argv.assign(kMaxArgs + 1, "x");
  EXPECT_EQ(ValidateRequest(r).code(), Code::kInvalidArgument);
  r = Good();
  r.argv[1] = std::string(kMaxArgBytes + 1, 'x');
  EXPECT_EQ(ValidateRequest(r).message().rfind("argv[1]", 0), 0u);
  r = Good();
  r.cwd = "/" + std::string(kMaxPathBytes, 'd');
  EXPECT_EQ(ValidateRequest(r).message().rfind("cwd", 0), 0u);
  r = Good();
  for (size_t i = 0; i <= kMaxEnvEntries; ++i) r.env["V" + std::to_string(i)] = "";
  EXPECT_EQ(ValidateRequest(r).message().rfind("too many environment variables", 0), 0u);
}

TEST(RequestValidationTest, TimeLimitAndDependenciesAreBounded) {
  JobRequest r = Good();
  r.time_limit_s = 3600;
  r.after = {1, 2};
  r.afterok.assign(kMaxDependencies - 2, 7);
  EXPECT_TRUE(ValidateFromWire(r).ok()) << "64 ids in all, repeats included, are fine";
  r.afterok.push_back(8);
  Status many = ValidateFromWire(r);
  EXPECT_EQ(many.message().rfind("too many dependencies: 65 job ids, at most 64", 0), 0u)
      << many.message();
  r = Good();
  r.afterok = {3, 0};
  ExpectRejected(r, "afterok: 0 is not a job id");
  r = Good();
  r.after = {-4};
  ExpectRejected(r, "after: -4 is not a job id");
  for (int64_t bad : {int64_t{-1}, int64_t{36500} * 86400 + 1, INT64_MAX}) {
    r = Good();
    r.time_limit_s = bad;
    ExpectRejected(r, "time limit must be between 0 (none) and");
  }
}

TEST(RequestValidationTest, ASignalIsBoundedAndItsTimeAndScopeNeedIt) {
  JobRequest r = Good();
  r.signal = 64;
  r.signal_before_s = kMaxSignalBeforeS;
  r.signal_leader_only = true;
  EXPECT_TRUE(ValidateFromWire(r).ok());
  for (int bad : {-1, 65, 1000}) {
    r.signal = bad;
    ExpectRejected(r, "signal must be between 1 and 64 (0: none)");
  }
  r = Good();
  r.signal = 10;
  for (int64_t bad : {int64_t{-1}, kMaxSignalBeforeS + 1, INT64_MAX}) {
    r.signal_before_s = bad;
    ExpectRejected(r, "signal_before_s must be between 0 and 65535 seconds");
  }
  r = Good();
  r.signal_before_s = 60;
  ExpectRejected(r, "signal_before_s and signal_leader_only need a signal");
  r = Good();
  r.signal_leader_only = true;
  ExpectRejected(r, "signal_before_s and signal_leader_only need a signal");
  r = Good();
  EXPECT_FALSE(ToJson(r).contains("signal")) << "left out when not set";
  r.signal = 12;
  r.signal_before_s = 300;
  r.signal_leader_only = true;
  r.requeue = true;
  auto back = RequestFromJson(json::parse(ToJson(r).dump()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, r);
  EXPECT_EQ(RequestFromJson(json::parse(R"({"signal_leader_only": 1})")).status().code(),
            Code::kInvalidArgument);
}

TEST(RequestValidationTest, TimeLimitAndDependenciesOnTheWire) {
  JobRequest r = Good();
  json plain = ToJson(r);
  EXPECT_FALSE(plain.contains("time_limit_s") || plain.contains("after") ||
               plain.contains("afterok"))
      << "left out when not set: requests read as they always have";
  r.time_limit_s = 90;
  r.after = {5};
  r.afterok = {6, 7};
  auto back = RequestFromJson(json::parse(ToJson(r).dump()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, r);
  for (const char* bad : {R"({"after": "5"})", R"({"after": [1.5]})", R"({"afterok": [1, null]})",
                          R"({"time_limit_s": "1h"})", R"({"time_limit_s": 1e30})"}) {
    EXPECT_EQ(RequestFromJson(json::parse(bad)).status().code(), Code::kInvalidArgument) << bad;
  }
}

TEST(RequestValidationTest, RelativeCwdIsRejected) {
  JobRequest r = Good();
  r.cwd = "home/alice";
  EXPECT_EQ(ValidateRequest(r).code(), Code::kInvalidArgument);
}

// --mig: a profile name that shows as it is, one GPU, no device list.
TEST(RequestValidationTest, AMigProfileIsAPlainNameOnOneGpu) {
  JobRequest r = Good();
  r.gpus = 1;
  r.mig_profile = "1g.10gb+me";
  EXPECT_TRUE(ValidateFromWire(r).ok());
  r.gpu_share_pct = 20;  // a share of the instance, its memory filled in by the daemon
  EXPECT_TRUE(ValidateFromWire(r).ok());
  for (const std::string& bad :
       {std::string("1g\x1b[2J"), std::string("1g 10gb"), std::string(33, 'g')}) {
    r.mig_profile = bad;
    Status s = ValidateFromWire(r);
    EXPECT_EQ(s.code(), Code::kInvalidArgument);
    EXPECT_NE(s.message().find("is not a profile name"), std::string::npos) << s.message();
    EXPECT_EQ(s.message().find('\x1b'), std::string::npos) << "escaped";
  }
  r.mig_profile = "1g.10gb";
  r.gpus = 2;
  EXPECT_EQ(ValidateFromWire(r).message(),
            "a MIG profile is one GPU: --mig takes no --gpus other than 1 and no --device");
  r.gpus = 1;
  r.devices = {0};
  EXPECT_EQ(ValidateFromWire(r).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace pinpoint

namespace pinpoint {
namespace {

// Slurm's task layout and where the submit ran (JobRequest::ntasks and after): bounded, and the
// submit host is display text (it is shown to people and set in the job's environment).
TEST(RequestValidationTest, TasksAndSubmitPlaceAreBounded) {
  JobRequest r = Good();
  r.ntasks = 4;
  r.gpus = 4;
  r.gpus_per_task = 1;
  r.submit_dir = "/home/alice/runs";
  r.submit_host = "login1";
  EXPECT_TRUE(ValidateFromWire(r).ok());
  for (int bad : {0, -1, kMaxTasks + 1}) {
    JobRequest t = Good();
    t.ntasks = bad;
    ExpectRejected(t, "ntasks");
  }
  JobRequest mismatch = r;
  mismatch.gpus = 3;
  ExpectRejected(mismatch, "gpus_per_task x ntasks");
  JobRequest relative = Good();
  relative.submit_dir = "runs";
  ExpectRejected(relative, "submit_dir");
  JobRequest nul = Good();
  nul.submit_dir = std::string("/a\0b", 4);
  EXPECT_EQ(ValidateRequest(nul).code(), Code::kInvalidArgument);
  JobRequest long_dir = Good();
  long_dir.submit_dir = "/" + std::string(kMaxPathBytes, 'd');
  ExpectRejected(long_dir, "submit_dir");
  JobRequest forged = Good();
  forged.submit_host = "login1\nSLURM_JOB_ID=1";
  ExpectRejected(forged, "submit_host");
  JobRequest long_host = Good();
  long_host.submit_host = std::string(kMaxNameBytes + 1, 'h');
  ExpectRejected(long_host, "submit_host");
}

}  // namespace
}  // namespace pinpoint
