// `pinpoint submit` (docs/cli.md "submit"): its options, and the submit itself: the request built
// and checked here, sent with an idempotency key (retried once when the reply was lost), then
// waited for with --wait (cli/submit_wait.h) or, for an array, finished by cli/job_arrays.h.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/script_directives.h"
#include "cli/submit_request.h"
#include "pinpoint/status.h"

namespace CLI {
class App;
}  // namespace CLI

namespace pinpoint::cli {

// Adds submit's options to `c`, bound to `submit`.
void AddSubmitOptions(CLI::App* c, SubmitArgs& submit);

// The request's fields that `options` (a script's, ApplyScript) set, as the daemon judges them
// (ScriptField): --as-user, --priority, --hold, --after, --afterok, -d/--dependency, --array,
// -J/--name, -o/--output, -e/--error, --export, -D/--chdir and -t/--time; the others are judged
// alike whoever gives them.
ScriptOrigins ScriptFieldsOf(const std::vector<ScriptOption>& options);

// Submits what `submit` asks through `socket`: the reply on `out` (--json: the API's form;
// --parsable: the id alone), lines for people on `err`. Returns the exit code: 0, or with --wait
// the job's (SubmitWaitExitCode). Errors: the request's (kInvalidArgument, one line), the
// daemon's and the connection's.
Result<int> RunSubmit(const std::string& socket, bool json, SubmitArgs& submit, std::ostream& out,
                      std::ostream& err);

}  // namespace pinpoint::cli
