// Pure formatting of daemon replies for people. No I/O.
#pragma once

#include <string>
#include <vector>

#include "pinpoint/api.h"
#include "pinpoint/status.h"

namespace pinpoint::cli {

// Every string from a reply that is printed for a person is escaped with EscapeForTerminal
// (names, argv, cwd, user names, details, event texts, device names, modes), so it can neither
// forge a line nor drive the terminal. `pinpoint logs` alone prints raw bytes. The formatters
// take any value a reply decodes to: no field's value can make them fail.

// argv as one line: each argument escaped, and quoted when it is empty or holds a space or quote,
// so what is shown is what ran.
std::string ShownCommand(const std::vector<std::string>& argv);

// "12_3": a job array's task as Slurm names it, ARRAYID_INDEX.
std::string ArrayTaskName(const ArrayTask& array);
// A job's enforcement list (docs/enforcement.md) as `show` prints it: a heading and one line per
// resource, each value escaped; "" for an empty list.
std::string FormatEnforcement(const std::vector<Enforcement>& list);
// The end of a job array's tasks for people: "array 12: 4 tasks, 3 completed, 1 failed", then one
// line per task that did not complete ("  job 14 (12_3) failed (exit code 3)"), the first 10.
std::string FormatArrayEnd(JobId array_id, const std::vector<JobView>& tasks);
// "job 7 completed (exit code 0)": an ended job as `wait` and `submit --wait` print it, one line
// with its newline. In brackets the daemon's detail of the end, or its reason where it gave none;
// one level of them ("job 7 cancelled by alice (killed by signal 15: Terminated)").
std::string FormatJobEnd(const JobView& job);

// "2 GPU x 4GiB 20%", "1 GPU (whole)", "-" for the resource column of a job.
std::string FormatGpuRequest(const JobRequest& request);

// A job's state as queue shows it: its JobStateName, but "suspended" for a running job whose
// suspend is made (Slurm's squeue says SUSPENDED; the API keeps it running, with its `suspend`).
std::string QueueStateName(const JobView& job);
// The queue table: one header line and one line per job; an ARRAY column (ArrayTaskName) when the
// page holds a job array's task.
std::string FormatQueue(const QueueReply& reply, int64_t now_ms);
// `queue --start`: a table of the page's pending jobs with when each would start ("now", "in
// 1h05m (2026-11-28 06:10 UTC)") or why no one can say ("unknown: held"), every text escaped.
std::string FormatStarts(const QueueReply& reply, int64_t now_ms);
// "... N more jobs: pinpoint queue --offset K" when a queue reply's page is not the last
// (its `more`), "" otherwise. `all` and `user` are the listing's own options; `more_options` the
// others to repeat (" --state pending", escaped), "" for none.
std::string MoreJobsLine(const QueueReply& reply, bool all, const std::string& user,
                         const std::string& more_options = "");
// One job in "key: value" lines, the advice line (when `advice` is not empty), its events.
std::string FormatJob(const ShowReply& reply, const std::string& advice);
// The devices table with the backend line on top.
// `pinpoint qos`: one line per service class (name, priority, what it preempts, its preempt mode
// and grace, its MPS client priority, who may use it), the default marked.
std::string FormatQos(const QosReply& reply);
std::string FormatGpus(const GpusReply& reply);
// "1m05s", "3.2s", "2h01m"; a negative time is 0.
std::string FormatDurationMs(int64_t ms);
// to - from, without overflow: what a duration between two times a reply gave can be.
int64_t ElapsedMs(int64_t from, int64_t to);

// The CLI's exit code for an error: 2 bad usage or input, 3 daemon unreachable, 4 not found,
// 5 permission denied, 6 the request can never be satisfied here, 1 anything else.
int ExitCodeFor(const Status& status);

}  // namespace pinpoint::cli
