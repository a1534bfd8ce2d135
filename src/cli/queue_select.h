// Selecting jobs as Slurm's squeue and scancel do (docs/cli.md "queue", "cancel"): by user, name,
// state and job or array id; and `queue --format`, the listing for scripts.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/job_arrays.h"
#include "pinpoint/api.h"
#include "pinpoint/client.h"
#include "pinpoint/status.h"

namespace CLI {
class App;
}  // namespace CLI

namespace pinpoint::cli {

// -u/--user, --name, -t/--state/--states and -j/--jobs as typed (comma lists).
struct JobSelection {
  std::string user;
  std::string names;
  std::string states;
  std::string jobs;
  bool any() const { return !user.empty() || !names.empty() || !states.empty() || !jobs.empty(); }
};

// `pinpoint queue`'s options.
struct QueueArgs {
  bool all = false;
  int limit = 0;
  int offset = 0;
  JobSelection select;
  std::string format;  // --format FIELDS: tab-separated fields for scripts
  bool noheader = false;
  bool start = false;  // --start: when pending jobs would start
};

// Adds queue's options to `queue`, read into `args`.
void AddQueueOptions(CLI::App* queue, QueueArgs& args);
// `pinpoint queue`: one page as a table (FormatQueue), as --format's fields, or with `json` the
// array of jobs; the next page's command after it (on `err` with `json`). Returns 0. Errors: a
// selection's or format's (kInvalidArgument), the client's.
Result<int> RunQueue(const std::string& socket, bool json, const QueueArgs& args, std::ostream& out,
                     std::ostream& err);

// What `pinpoint cancel` cancels: the jobs `typed` names (SelectJobs), or with a selection the
// active jobs it matches (among `typed`'s when some are typed). Errors: kInvalidArgument (nothing
// named or selected; a selection's), SelectJobs's, the client's.
Result<SelectedJobs> SelectForCancel(Client& client, const std::vector<std::string>& typed,
                                     const JobSelection& selection);

// Adds the selection's options to `command` (queue's and cancel's alike); `with_jobs` adds
// -j/--jobs too (cancel names its jobs as arguments).
void AddSelectionOptions(CLI::App* command, JobSelection& selection, bool with_jobs);

// "pending,R,CA": job states by name (any case) or Slurm's codes (PD, R, CD, F, CA). Errors:
// kInvalidArgument naming the word.
Result<std::vector<JobState>> ParseStates(const std::string& text);

// Fills `request`'s user, names, states and ids from `selection`; job ids typed as ARRAY_INDEX are
// found through `client` (SelectJobs). Errors: kInvalidArgument (one line), the client's.
Status ApplySelection(Client& client, const JobSelection& selection, QueueRequest& request);

// The ids of the active jobs `request` selects (every page). Errors: the client's.
Result<std::vector<JobId>> SelectedIds(Client& client, QueueRequest request);

// The fields `queue --format` knows, in the order of its help.
const std::vector<std::string>& QueueFields();
// "id,name,state": field names of QueueFields. Errors: kInvalidArgument naming the unknown field
// and the known ones.
Result<std::vector<std::string>> ParseQueueFields(const std::string& text);
// The jobs of `reply` as tab-separated `fields`, one line a job (an array's tasks too), each value
// escaped for a terminal; a header of the fields in capitals unless `header` is false.
std::string FormatQueueFields(const QueueReply& reply, const std::vector<std::string>& fields,
                              bool header, int64_t now_ms);

}  // namespace pinpoint::cli
