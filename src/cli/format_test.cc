// What the CLI prints for people holds no byte a terminal acts on, whatever the daemon's reply
// carries: records stored before requests were validated, detail and event texts that quote
// user input, device names. The assertions are on the output bytes.
#include "cli/format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "cli/advice.h"
#include "cli/queue_select.h"
#include "cli/top.h"
#include "common/raw_control.h"
#include "pinpoint/api_codec.h"

namespace pinpoint::cli {
namespace {

using nlohmann::json;

// A reply as the CLI gets it: decoded by the API codec.
template <typename Reply>
Reply Decode(const json& j) {
  auto reply = FromJson<Reply>(j);
  EXPECT_TRUE(reply.ok()) << reply.status().message();
  return reply.ok() ? *reply : Reply{};
}

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

const char kOsc[] = "\x1b]0;you are root\x07";
const char kForgedRow[] = "x\n42    root   backup   running";

json HostileJob() {
  json req{{"name", std::string("job") + kForgedRow + kOsc},
           {"argv",
            {"python", std::string("\x1b[2J") + "wipe", "a\nb",
             "\xc2\x9b"
             "31m",
             "it's"}},
           {"cwd", "/home/mallory\n/root"},
           {"gpus", 1},
           {"gpu_mem_bytes", 1ull << 30},
           {"cpus", 1},
           {"priority", 0}};
  return json{{"id", 7},
              {"request", req},
              {"uid", 1000},
              {"user", std::string("mal\x1b[8mlory")},
              {"state", "pending"},
              {"reason", "resources"},
              {"detail", std::string("exec failed: ") + kOsc + "\nforged detail"},
              {"submit_ms", 1000},
              {"allocations", json::array()}};
}

TEST(FormatEscapeTest, QueueShowsHostileJobOnOneLineWithoutControls) {
  json reply{{"jobs", {HostileJob()}}, {"backend", "simulated:h100x2"}};
  std::string out = FormatQueue(Decode<QueueReply>(reply), 2000);
  EXPECT_FALSE(HasRawControl(out, /*newline_ok=*/true)) << out;
  EXPECT_EQ(Lines(out), 3) << out;  // header, the job, the simulated-node line: no forged row
  EXPECT_NE(out.find("\\x1b]0;you are root\\x07"), std::string::npos) << out;
  EXPECT_NE(out.find("x\\n42"), std::string::npos) << out;
}

TEST(FormatEscapeTest, QueueFieldsForScriptsAreOneLineAJobWithoutControlsOrTabsOfTheirOwn) {
  json reply{{"jobs", {HostileJob(), HostileJob()}}, {"backend", "simulated:h100x2"}};
  reply["jobs"][1]["request"]["name"] = "tab\there";
  auto fields = ParseQueueFields("id,NAME,user,detail,gpus");
  ASSERT_TRUE(fields.ok()) << fields.status().ToString();
  std::string out = FormatQueueFields(Decode<QueueReply>(reply), *fields, /*header=*/true, 2000);
  std::string untabbed = out;
  std::erase(untabbed, '\t');
  EXPECT_FALSE(HasRawControl(untabbed, /*newline_ok=*/true)) << out;
  EXPECT_EQ(Lines(out), 3) << out;  // header and two jobs: no forged row
  EXPECT_EQ(out.rfind("ID\tNAME\tUSER\tDETAIL\tGPUS\n", 0), 0u) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\t'), 12)
      << "four separators a line, none from a value: " << out;
  EXPECT_EQ(FormatQueueFields(Decode<QueueReply>(reply), {"id"}, /*header=*/false, 0).find("ID"),
            std::string::npos);
  EXPECT_EQ(ParseQueueFields("id,bogus").status().code(), Code::kInvalidArgument);
}

TEST(FormatEscapeTest, AnEnforcementListIsOneLinePerResourceWithoutControls) {
  json job = HostileJob();
  job["state"] = "running";
  job["start_ms"] = 2000;
  // What a job's own process set for itself reaches the list: a forged row and a title change.
  job["enforcement"] =
      json::array({{{"resource", "devices"},
                    {"asked", "1 GPU"},
                    {"applied", std::string("CUDA_VISIBLE_DEVICES=") + kForgedRow + kOsc},
                    {"observed", "GPU 0 (NVML)"},
                    {"verdict", "disagrees"}},
                   {{"resource", "time"},
                    {"asked", "no limit"},
                    {"applied", "no limit"},
                    {"observed", "running"},
                    {"verdict", "held"}}});
  ShowReply reply;
  reply.job = Decode<JobView>(job);
  ASSERT_EQ(reply.job.enforcement.size(), 2u) << "the wire carries the list";
  std::string list = FormatEnforcement(reply.job.enforcement);
  EXPECT_EQ(Lines(list), 3) << list;  // its heading and one line per resource
  EXPECT_FALSE(HasRawControl(list, /*newline_ok=*/true)) << list;
  EXPECT_NE(FormatJob(reply, "").find(list), std::string::npos) << "show prints it";
  EXPECT_EQ(FormatEnforcement({}), "");
}

// Ctrl-C on `submit --wait` printed three levels of brackets; one is left, the state said once.
TEST(FormatJobEndTest, OneLevelOfBrackets) {
  JobView job;
  job.id = 7;
  job.state = JobState::kCancelled;
  job.detail = "cancelled by alice (killed by signal 15 (Terminated))";
  EXPECT_EQ(FormatJobEnd(job), "job 7 cancelled by alice (killed by signal 15: Terminated)\n");
  job.state = JobState::kFailed;
  job.detail = "killed by signal 9 (Killed)";
  EXPECT_EQ(FormatJobEnd(job), "job 7 failed (killed by signal 9: Killed)\n");
  job.detail = "ran past its time limit of 0:01 (killed by signal 15 (Terminated))";
  EXPECT_EQ(FormatJobEnd(job),
            "job 7 failed: ran past its time limit of 0:01 (killed by signal 15: Terminated)\n");
  job.state = JobState::kCompleted;
  job.detail = "exit code 0";
  EXPECT_EQ(FormatJobEnd(job), "job 7 completed (exit code 0)\n");
}

TEST(FormatQueueTest, StartsSayWhenOrWhyNotWithoutControls) {
  json hostile = HostileJob();
  hostile["id"] = 8;
  hostile["state"] = "pending";
  json plain = hostile;
  plain["id"] = 9;
  json reply{{"jobs", {hostile, plain}},
             {"starts",
              {{{"id", 8}, {"why", std::string("held") + kOsc}},
               {{"id", 9}, {"start_ms", 1'800'000'000'000 + 3'900'000}}}}};
  std::string out = FormatStarts(Decode<QueueReply>(reply), 1'800'000'000'000);
  EXPECT_FALSE(HasRawControl(out, /*newline_ok=*/true)) << out;
  EXPECT_EQ(Lines(out), 3) << out;
  EXPECT_NE(out.find("unknown: held\\x1b]0;"), std::string::npos) << out;
  EXPECT_NE(out.find("in 1h05m (2027-01-15 09:05 UTC)"), std::string::npos) << out;
  EXPECT_NE(
      FormatStarts(Decode<QueueReply>(json{{"jobs", json::array()}}), 0).find("(no pending jobs)"),
      std::string::npos);
}

TEST(QueueSelectTest, StatesAreNamesOrSlurmsCodesInAnyCase) {
  auto states = ParseStates("PD,running,CA,pending");
  ASSERT_TRUE(states.ok()) << states.status().ToString();
  EXPECT_EQ(*states,
            (std::vector<JobState>{JobState::kPending, JobState::kRunning, JobState::kCancelled}));
  EXPECT_EQ(ParseStates("held").status().message(),
            "--state: 'held' is not a job state (pending, running, completed, failed, cancelled; "
            "PD, R, CD, F, CA)");
  EXPECT_FALSE(ParseStates("").ok());
}

TEST(FormatEscapeTest, ShowEscapesNameArgvCwdUserDetailAndEvents) {
  json reply{{"job", HostileJob()},
             {"events",
              {{{"time_ms", 1000}, {"kind", "submit"}, {"detail", std::string("by ") + kOsc}},
               {{"time_ms", 1500}, {"kind", "end\nforged"}, {"detail", "\x1b[1A\x1b[2K"}}}}};
  std::string out = FormatJob(Decode<ShowReply>(reply), std::string("advice") + kOsc);
  EXPECT_FALSE(HasRawControl(out, /*newline_ok=*/true)) << out;
  EXPECT_NE(out.find("command:  python \\x1b[2Jwipe a\\nb \\u009b31m 'it'\\''s'"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("cwd:      /home/mallory\\n/root\n"), std::string::npos) << out;
  EXPECT_NE(out.find("mal\\x1b[8mlory"), std::string::npos) << out;
  EXPECT_EQ(out.find("\nforged"), std::string::npos) << out;
}

TEST(FormatLeaseTest, ALeaseIsNamedOneAndItsCgroupIsEscaped) {
  json lease = HostileJob();
  lease["kind"] = "lease";
  lease["state"] = "running";
  lease["request"]["name"] = "web";
  lease["lease_cgroup"] = std::string("0::/machine/libpod-c1\n") + kOsc;
  std::string queue = FormatQueue(Decode<QueueReply>(json{{"jobs", {lease}}}), 2000);
  EXPECT_NE(queue.find("web (lease)"), std::string::npos) << queue;
  std::string show = FormatJob(Decode<ShowReply>(json{{"job", lease}}), "");
  EXPECT_FALSE(HasRawControl(show, /*newline_ok=*/true)) << show;
  EXPECT_EQ(show.rfind("lease 7 (web)\n", 0), 0u) << show;
  EXPECT_NE(show.find("command:  none: a lease for a container"), std::string::npos) << show;
  EXPECT_NE(show.find("cgroup:   0::/machine/libpod-c1\\n\\x1b]0;"), std::string::npos) << show;
  EXPECT_EQ(show.find("cwd:"), std::string::npos) << show;
  EXPECT_NE(show.find("\n  limit:    none: it holds its slice until it is closed\n"),
            std::string::npos)
      << show;
}

// Who holds a lease, since when and until when: root reads it in show (and queue -o start,limit).
TEST(FormatLeaseTest, ShowSaysUntilWhenALeaseHoldsItsSlice) {
  json lease = HostileJob();
  lease["kind"] = "lease";
  lease["state"] = "running";
  lease["start_ms"] = 86'400'000;  // 1970-01-02 00:00 UTC
  lease["request"]["time_limit_s"] = 5400;
  std::string show = FormatJob(Decode<ShowReply>(json{{"job", lease}}), "");
  EXPECT_NE(
      show.find("\n  limit:    holds its slice at most 1:30:00, until 1970-01-02 01:30 UTC\n"),
      std::string::npos)
      << show;
}

// A job's time stands still while it is suspended: show's "until" moves by the time its suspends
// took, and while it is in one there is no "until" to give.
TEST(FormatShowTest, TheLimitsEndMovesByTheTimeSuspended) {
  json job = HostileJob();
  job["state"] = "running";
  job["start_ms"] = 86'400'000;  // 1970-01-02 00:00 UTC
  job["request"]["time_limit_s"] = 5400;
  job["suspended_ms"] = 600'000;
  std::string show = FormatJob(Decode<ShowReply>(json{{"job", job}}), "");
  EXPECT_NE(show.find("\n  limit:    runs at most 1:30:00, until 1970-01-02 01:40 UTC (10m00s "
                      "suspended)\n"),
            std::string::npos)
      << show;
  job["suspend"] = {{"phase", "suspended"}, {"detail", "asked by root"}};
  show = FormatJob(Decode<ShowReply>(json{{"job", job}}), "");
  EXPECT_NE(show.find("\n  limit:    runs at most 1:30:00, its time standing still while it is "
                      "suspended\n"),
            std::string::npos)
      << show;
}

TEST(FormatShowTest, TimeLimitAndDependenciesOnlyWhenGiven) {
  json job = HostileJob();
  std::string plain = FormatJob(Decode<ShowReply>(json{{"job", job}}), "");
  EXPECT_EQ(plain.find("limit:"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("after"), std::string::npos) << plain;
  job["request"]["time_limit_s"] = 5400;
  job["request"]["after"] = {3, 4};
  job["request"]["afterok"] = {5};
  std::string show = FormatJob(Decode<ShowReply>(json{{"job", job}}), "");
  EXPECT_NE(show.find("\n  limit:    runs at most 1:30:00\n"), std::string::npos) << show;
  EXPECT_NE(show.find("\n  after:    3, 4 (starts once they have ended)\n"), std::string::npos)
      << show;
  EXPECT_NE(show.find("\n  afterok:  5 (starts once they have completed)\n"), std::string::npos)
      << show;
}

// A job whose suspend is made shows as suspended, as Slurm's squeue says SUSPENDED; one whose
// suspend or resume is under way still runs (its GPUs are held).
TEST(FormatQueueTest, ASuspendedJobIsShownSuspended) {
  auto job = [](int64_t id, const char* phase) {
    json j{{"id", id}, {"state", "running"}, {"start_ms", 1000}};
    if (*phase) j["suspend"] = {{"phase", phase}, {"detail", "asked by root"}};
    return j;
  };
  QueueReply reply = Decode<QueueReply>(
      json{{"jobs", {job(1, "suspended"), job(2, "suspending"), job(3, "resuming"), job(4, "")}}});
  std::string out = FormatQueue(reply, 2000);
  auto row = [&out](const std::string& id) {
    size_t at = out.find("\n" + id + " ");
    return at == std::string::npos ? std::string()
                                   : out.substr(at + 1, out.find('\n', at + 1) - at);
  };
  EXPECT_NE(row("1").find(" suspended "), std::string::npos) << out;
  for (const char* id : {"2", "3", "4"})
    EXPECT_NE(row(id).find(" running "), std::string::npos) << id << "\n" << out;
  std::string fields = FormatQueueFields(reply, {"id", "state"}, /*header=*/false, 2000);
  EXPECT_EQ(fields, "1\tsuspended\n2\trunning\n3\trunning\n4\trunning\n");
}

// squeue's form: an array's pending tasks that wait for one reason are one row; a running task,
// another reason or another array starts a new row.
TEST(FormatQueueTest, AnArraysPendingTasksAreOneRow) {
  auto task = [](int64_t id, int index, const char* state, const char* reason, JobId array = 5) {
    return json{{"id", id},
                {"state", state},
                {"reason", reason},
                {"detail", std::string("waits ") + reason},
                {"array",
                 {{"id", array},
                  {"index", index},
                  {"count", 20},
                  {"min_index", 1},
                  {"max_index", 20},
                  {"limit", 4}}}};
  };
  json jobs =
      json::array({task(5, 1, "running", ""), task(6, 2, "pending", "array-limit"),
                   task(7, 3, "pending", "array-limit"), task(9, 5, "pending", "array-limit"),
                   task(10, 6, "pending", "held"), task(30, 1, "pending", "array-limit", 30)});
  std::string out = FormatQueue(Decode<QueueReply>(json{{"jobs", jobs}}), 0);
  EXPECT_EQ(Lines(out), 5) << out;
  EXPECT_NE(out.find("\n5   5_1 "), std::string::npos) << out;
  EXPECT_NE(out.find("\n6   5_[2-3,5%4] "), std::string::npos) << out;
  EXPECT_NE(out.find("array-limit: waits array-limit"), std::string::npos) << out;
  EXPECT_NE(out.find("\n10  5_6 "), std::string::npos) << out;
  EXPECT_NE(out.find("\n30  30_1 "), std::string::npos) << out;
}

TEST(FormatQueueTest, MoreJobsLineNamesTheNextPage) {
  json reply{
      {"jobs", json::array({json::object(), json::object()})}, {"offset", 1000}, {"more", 8998}};
  EXPECT_EQ(
      MoreJobsLine(Decode<QueueReply>(reply), false, ""),
      "... 8998 more jobs: pinpoint queue --offset 1002 (--limit N for up to 10000 a page)\n");
  EXPECT_NE(MoreJobsLine(Decode<QueueReply>(reply), true, "alice")
                .find("pinpoint queue --all --user alice --offset 1002"),
            std::string::npos);
  reply["more_tasks"] = 9897;  // a pending array past the page: one row for its tasks
  EXPECT_EQ(MoreJobsLine(Decode<QueueReply>(reply), false, ""),
            "... 9897 more jobs in 8998 rows: pinpoint queue --offset 1002 (--limit N for up to "
            "10000 a page)\n");
  reply["more"] = 0;
  reply["more_tasks"] = 0;
  EXPECT_EQ(MoreJobsLine(Decode<QueueReply>(reply), false, ""), "");
  EXPECT_EQ(MoreJobsLine(Decode<QueueReply>(json{{"jobs", json::array()}}), false, ""), "")
      << "older daemons send no \"more\"";
}

TEST(FormatEscapeTest, QuotesArgumentsSoWhatIsShownIsWhatRan) {
  EXPECT_EQ(ShownCommand({"echo", "a b", "", "c"}), "echo 'a b' '' c");
}

TEST(FormatEscapeTest, GpusTopAndReportEscapeDeviceAndUserNames) {
  json dev{{"index", 0},
           {"gpu_index", 0},
           {"uuid", "GPU-0\x1b[2J"},
           {"name", std::string("H100") + kOsc},
           {"mode", "mps"},
           {"mps_user", "eve\x1b[31m"},
           {"mem_bytes", 1ull << 30},
           {"jobs",
            {{{"id", 7},
              {"user", "eve\n"},
              {"name", std::string("n") + kOsc},
              {"gpu_mem_bytes", 1ull << 30}}}}};
  json change{{"at_ms", 0},
              {"gpu", 0},
              {"action", "create\x1b[2J"},
              {"profile", std::string("1g") + kOsc},
              {"start", 1},
              {"result", "no room\x1b[31m"}};
  json gpus{{"backend", "nvml"},
            {"driver", "550\x1b[0m"},
            {"devices", {dev}},
            {"host", json::object()},
            {"mig_changes", {change}}};
  std::string out = FormatGpus(Decode<GpusReply>(gpus));
  EXPECT_FALSE(HasRawControl(out, /*newline_ok=*/true)) << out;
  out = FormatTop(Decode<GpusReply>(gpus), 0);
  EXPECT_FALSE(HasRawControl(out, /*newline_ok=*/true)) << out;
  json ended = HostileJob();
  ended["state"] = "completed";
  out = FormatReport(Report({Decode<JobView>(ended)}));
  EXPECT_FALSE(HasRawControl(out, /*newline_ok=*/true)) << out;
}

TEST(FormatReportTest, VerdictsAreCountedPerUserAndInAll) {
  auto job = [](const std::string& user, std::vector<std::string> verdicts) {
    JobView v;
    v.user = user;
    v.state = JobState::kCompleted;
    for (const std::string& verdict : verdicts)
      v.enforcement.push_back(Enforcement{.resource = "gpu_mem", .verdict = verdict});
    return v;
  };
  JobView running = job("ana", {"disagrees"});
  running.state = JobState::kRunning;  // not ended: not in the report
  UsageReport report =
      Report({job("ana", {"held", "held", "exceeded"}), job("bo", {"held", "disagrees"}), running});
  ASSERT_EQ(report.users.size(), 2u);
  EXPECT_EQ(report.users[0].verdicts,
            (std::map<std::string, int64_t>{{"exceeded", 1}, {"held", 2}}));
  EXPECT_EQ(report.users[1].verdicts,
            (std::map<std::string, int64_t>{{"disagrees", 1}, {"held", 1}}));
  EXPECT_EQ(report.total.verdicts.at("held"), 3);
  EXPECT_EQ(ToJson(report)["users"][1]["verdicts"]["disagrees"], 1);
  std::string out = FormatReport(report);
  EXPECT_NE(out.find("bo               disagrees 1, held 1"), std::string::npos) << out;
  EXPECT_EQ(FormatReport(Report({job("ana", {})})).find("enforcement"), std::string::npos)
      << "no lists, no section";
}

TEST(FormatGpuRequestTest, ANamedMigProfileIsShown) {
  JobRequest r;
  r.gpus = 1;
  r.gpu_mem_bytes = uint64_t{9984} << 20;
  r.mig_profile = "1g.10gb";
  EXPECT_EQ(FormatGpuRequest(r), "1 GPU x 9.8GiB on MIG 1g.10gb");
}

// A mig-dynamic GPU's vacant slot shows no UUID; the layout changes follow the table, failures
// with their reason.
TEST(FormatGpusTest, MigSlotsAndTheirChanges) {
  json vacant{{"index", 3},
              {"gpu_index", 0},
              {"uuid", ""},
              {"name", "A100 MIG slot 3 (vacant)"},
              {"mode", "mps"},
              {"mem_bytes", 10ull << 30},
              {"mig_slot", {{"start", 3}, {"vacant", true}}}};
  json made{{"at_ms", 1'700'000'000'000},
            {"gpu", 0},
            {"action", "create"},
            {"profile", "1g.10gb"},
            {"start", 2},
            {"instance_id", 5},
            {"uuid", "MIG-x"},
            {"for_job", 17},
            {"result", "ok"}};
  json failed{{"at_ms", 1'700'000'001'000},
              {"gpu", 0},
              {"action", "destroy"},
              {"profile", "2g.20gb"},
              {"start", 0},
              {"instance_id", 3},
              {"result", "MIG GPU 0 instance 3 is in use by process 9: not destroyed"}};
  json gpus{{"backend", "simulated:a100x8-mig"},
            {"simulated", true},
            {"devices", {vacant}},
            {"host", json::object()},
            {"mig_changes", {made, failed}}};
  GpusReply reply = Decode<GpusReply>(gpus);
  ASSERT_TRUE(reply.devices[0].mig_slot.has_value());
  EXPECT_TRUE(reply.devices[0].mig_slot->vacant);
  std::string out = FormatGpus(reply);
  EXPECT_NE(out.find("3    0    -     A100 MIG slot 3 (vacant)"), std::string::npos) << out;
  EXPECT_NE(out.find("MIG changes (mig-dynamic), oldest first:\n"
                     "  2023-11-14 22:13:20 UTC  GPU 0 create 1g.10gb at memory slice 2 (GPU "
                     "instance 5) for job 17\n"
                     "  2023-11-14 22:13:21 UTC  GPU 0 destroy 2g.20gb at memory slice 0 (GPU "
                     "instance 3): FAILED: "
                     "MIG GPU 0 instance 3 is in use by process 9: not destroyed\n"),
            std::string::npos)
      << out;
}

// What holds a device after its job ended follows the table, one line per device and job: the
// process, its user and since when; when it is killed. Nothing is printed while no one holds one.
TEST(FormatGpusTest, DevicesHeldAfterTheirJobEnded) {
  json held{{"index", 1},
            {"gpu_index", 1},
            {"uuid", "GPU-1"},
            {"name", "H100"},
            {"mode", "mps"},
            {"mem_bytes", 80ull << 30},
            {"holds",
             {{{"job", 17},
               {"user", "alice\x1b[2J"},
               {"pids", {4242, 4243}},
               {"in_job", false},
               {"since_ms", 1'700'000'000'000},
               {"deadline_ms", 1'700'000'060'000},
               {"killed", false}}}}};
  json gpus{{"backend", "simulated:h100x2"},
            {"simulated", true},
            {"devices", {held}},
            {"host", json::object()}};
  std::string out = FormatGpus(Decode<GpusReply>(gpus));
  EXPECT_NE(
      out.find("held after their job ended (taken until these processes exit):\n"
               "  device 1: process 4242,4243 of alice\\x1b[2J, in no job, since job 17 ended at "
               "2023-11-14 22:13:20 UTC; killed at 2023-11-14 22:14:20 UTC\n"),
      std::string::npos)
      << out;
  gpus["devices"][0]["holds"][0]["killed"] = true;
  EXPECT_NE(FormatGpus(Decode<GpusReply>(gpus))
                .find("2023-11-14 22:13:20 UTC: sent SIGKILL at the deadline\n"),
            std::string::npos);
  gpus["devices"][0].erase("holds");
  EXPECT_EQ(FormatGpus(Decode<GpusReply>(gpus)).find("held after"), std::string::npos);
}

}  // namespace
}  // namespace pinpoint::cli

namespace pinpoint::cli {
namespace {

// A frame's lines, the last with or without its newline.
std::vector<std::string> FrameLines(const std::string& frame) {
  std::vector<std::string> lines;
  for (size_t at = 0; at < frame.size();) {
    size_t end = std::min(frame.find('\n', at), frame.size());
    lines.push_back(frame.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

// With 40 slices on GPU 0, GPU 1's jobs are shown too: rows are cut from the device showing the
// most (they were cut from the last device first, and GPU 1 showed none of its jobs).
TEST(FormatTopTest, EveryDeviceKeepsItsShareOfJobRows) {
  auto device = [](int index, int jobs) {
    json list = json::array();
    for (int i = 0; i < jobs; ++i)
      list.push_back({{"id", index * 100 + i + 1},
                      {"user", "alice"},
                      {"name", "j"},
                      {"gpu_mem_bytes", 1ull << 30}});
    return json{{"index", index}, {"gpu_index", index},       {"uuid", "GPU-x"}, {"name", "H100"},
                {"mode", "mps"},  {"mem_bytes", 80ull << 30}, {"jobs", list}};
  };
  json gpus{
      {"backend", "nvml"}, {"devices", {device(0, 40), device(1, 3)}}, {"host", {{"cpus", 32}}}};
  std::string fitted = FormatTop(Decode<GpusReply>(gpus), 0, 80, 24);
  EXPECT_EQ(FrameLines(fitted).size(), 24u) << fitted;
  for (const char* job : {" 101 alice", " 102 alice", " 103 alice"})
    EXPECT_NE(fitted.find(job), std::string::npos) << "GPU 1's job" << job << ": " << fitted;
  EXPECT_NE(fitted.find("  1 alice"), std::string::npos) << "GPU 0's first job: " << fitted;
}

// `pinpoint top` in an 80x24 terminal: no line wraps, the header stays, and what did not fit is
// counted on the last line.
TEST(FormatTopTest, AFrameFitsAn80By24Window) {
  json jobs = json::array();
  for (int i = 0; i < 12; ++i)
    jobs.push_back({{"id", 100 + i},
                    {"user", "alice"},
                    {"name", "a-rather-long-job-name"},
                    {"gpu_mem_bytes", 4ull << 30},
                    {"gpu_mem_used_bytes", 3ull << 30},
                    {"gpu_share_pct", 20},
                    {"energy_mj", 1000000}});
  json dev0{{"index", 0},
            {"gpu_index", 0},
            {"uuid", "GPU-0"},
            {"name", "NVIDIA H100 80GB HBM3"},
            {"mode", "mps"},
            {"mem_bytes", 80ull << 30},
            {"mem_used_bytes", 40ull << 30},
            {"utilization_pct", 87},
            {"power_mw", 350000},
            {"energy_mj", 0},
            {"jobs", jobs}};
  json dev1 = dev0;
  dev1["index"] = 1;
  dev1["gpu_index"] = 1;
  json gpus{{"backend", "nvml"},
            {"devices", {dev0, dev1}},
            {"host", {{"cpus", 32}, {"mem_bytes", 256ull << 30}}}};
  GpusReply reply = Decode<GpusReply>(gpus);
  std::string full = FormatTop(reply, 0);
  size_t widest = 0, count = 0;
  for (size_t at = 0; at < full.size(); ++count) {
    size_t end = full.find('\n', at);
    widest = std::max(widest, end - at);
    at = end + 1;
  }
  ASSERT_GT(widest, 80u) << "the full frame is wider than 80 columns";
  ASSERT_GT(count, 24u);

  std::string fitted = FormatTop(reply, 0, 80, 24);
  std::vector<std::string> lines = FrameLines(fitted);
  EXPECT_NE(fitted.back(), '\n') << "a newline after the 24th line scrolls the header away";
  EXPECT_EQ(lines.size(), 24u) << fitted;
  for (const auto& line : lines) EXPECT_LE(line.size(), 80u) << line;
  EXPECT_EQ(lines.front().rfind("pinpoint top", 0), 0u) << "the header stays";
  EXPECT_NE(fitted.find("dev 1 (GPU 1)"), std::string::npos) << "every device is shown: " << fitted;
  EXPECT_NE(fitted.find("  used  ["), std::string::npos) << fitted;
  EXPECT_EQ(lines.back(), "(" + std::to_string(count - 23) +
                              " more lines hidden: a larger window, or pinpoint gpus)")
      << fitted;
}

}  // namespace
}  // namespace pinpoint::cli
