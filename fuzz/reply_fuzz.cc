// Fuzzes what a client does with a reply it did not expect: the client's reading of a reply line
// and its decoding for each op (api_codec.h, as pinpoint::Client does it), then what the CLI does
// with the reply: its formatters for people and its --json output.
//
// Input: byte 0 picks the op (version, submit, wait, queue, show, cancel, gpus, logs), bytes 1-8
// are the clock for the formatters (little-endian Unix milliseconds), the rest is the reply line.
//
// A crash is: an exception or a sanitizer report anywhere; a decoded reply whose JSON does not
// decode back to the same JSON; text for people that holds a byte a terminal acts on.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "cli/advice.h"
#include "cli/format.h"
#include "cli/top.h"
#include "common/raw_control.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/escape.h"

namespace pinpoint {
namespace {

using nlohmann::json;

void ExpectPrintable(const std::string& text) {
  if (HasRawControl(text, /*newline_ok=*/true)) __builtin_trap();
}

// What `pinpoint show` prints for a job, in both forms.
void ShowJob(const ShowReply& reply) {
  cli::Advice advice = cli::AdviseJob(reply.job);
  ExpectPrintable(cli::FormatJob(reply, advice.text));
  json j = ToJson(reply);
  j["advice"] = {{"text", advice.text},
                 {"suggested_gpu_mem_bytes", advice.suggested_gpu_mem_bytes}};
  (void)j.dump(2);
}

void Format(const VersionReply& r, int64_t) {
  ExpectPrintable(EscapeForTerminal(r.version) + EscapeForTerminal(r.backend) +
                  std::to_string(r.schema));
}
void Format(const SubmitReply& r, int64_t) {
  ExpectPrintable(std::string(JobStateName(r.job.state)) + EscapeForTerminal(r.job.detail));
  ShowJob(ShowReply{r.job, {}});
}
void Format(const WaitReply& r, int64_t now_ms) { Format(SubmitReply{r.job}, now_ms); }
void Format(const QueueReply& r, int64_t now_ms) {
  ExpectPrintable(cli::FormatQueue(r, now_ms));
  ExpectPrintable(cli::MoreJobsLine(r, true, "alice"));
  cli::UsageReport report = cli::Report(r.jobs);
  ExpectPrintable(cli::FormatReport(report));
  (void)cli::ToJson(report).dump(2);
}
void Format(const ShowReply& r, int64_t) { ShowJob(r); }
void Format(const CancelReply& r, int64_t) {
  for (const auto& result : r.results) ExpectPrintable(EscapeForTerminal(result.status.message()));
}
void Format(const GpusReply& r, int64_t now_ms) {
  ExpectPrintable(cli::FormatGpus(r));
  ExpectPrintable(cli::FormatTop(r, now_ms));
}
void Format(const LogsReply&, int64_t) {}  // `pinpoint logs` prints the job's own bytes

template <typename Request>
void Check(std::string_view line, int64_t now_ms) {
  auto object = ParseReplyLine(line);
  if (!object.ok()) {
    ExpectPrintable(EscapeForTerminal(object.status().message()));
    return;
  }
  auto reply = DecodeReply<Request>(*object);
  if (!reply.ok()) {
    if (reply.status().code() != Code::kInternal) __builtin_trap();
    ExpectPrintable(EscapeForTerminal(reply.status().message()));
    return;
  }
  json once = ToJson(*reply);
  (void)once.dump(2);  // the --json output
  auto again = FromJson<typename Request::Reply>(once);
  if (!again.ok() || ToJson(*again) != once) __builtin_trap();
  Format(*reply, now_ms);
}

}  // namespace
}  // namespace pinpoint

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pinpoint;
  if (size < 9) return 0;
  int64_t now_ms = 0;
  std::memcpy(&now_ms, data + 1, sizeof(now_ms));
  std::string_view line(reinterpret_cast<const char*>(data) + 9, size - 9);
  switch (data[0] % 8) {
    case 0:
      Check<VersionRequest>(line, now_ms);
      break;
    case 1:
      Check<SubmitRequest>(line, now_ms);
      break;
    case 2:
      Check<WaitRequest>(line, now_ms);
      break;
    case 3:
      Check<QueueRequest>(line, now_ms);
      break;
    case 4:
      Check<ShowRequest>(line, now_ms);
      break;
    case 5:
      Check<CancelRequest>(line, now_ms);
      break;
    case 6:
      Check<GpusRequest>(line, now_ms);
      break;
    case 7:
      Check<LogsRequest>(line, now_ms);
      break;
  }
  return 0;
}
