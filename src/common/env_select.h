// Which of the submitter's environment variables a job gets (`pinpoint submit --export`), and
// the names pinpoint never sends or stores because they look like secrets (docs/security.md,
// "Environments"). Pure functions: no I/O.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pinpoint/status.h"

namespace pinpoint {

// The patterns of variable names that pinpoint treats as secrets, shell globs matched without
// regard to case: *TOKEN, *SECRET*, *PASSWORD*, *_KEY, ... (env_select.cc has the list;
// docs/security.md shows it). The CLI never sends such a variable; pinpointd's `env_deny`
// setting defaults to this list and drops what matches before it stores a job.
const std::vector<std::string>& DefaultEnvDeny();

// The first of `patterns` that `name` matches (case-insensitive shell glob), or nullopt.
std::optional<std::string> DeniedBy(const std::string& name,
                                    const std::vector<std::string>& patterns);

// Checks one deny pattern for the configuration: 1 to 256 printable ASCII characters.
// Errors: kInvalidArgument saying why.
Status ValidateEnvPattern(const std::string& pattern);

// --export, as Slurm spells it: "ALL" (the default), "NONE", or a comma-separated list of
// names and NAME=value items, optionally led by ALL or NONE ("ALL,OMP_NUM_THREADS=4").
struct ExportSpec {
  bool all = true;                         // start from the whole environment
  std::vector<std::string> names;          // taken from the environment (unset ones skipped)
  std::map<std::string, std::string> set;  // NAME=value items
};

// Errors: kInvalidArgument naming the bad item ("--export: ..." ).
Result<ExportSpec> ParseExport(const std::string& text);

// What a job started from `environment` under `spec` is sent: the selected variables less
// those that match `deny`, with `dropped` (may be null) receiving the names left out for
// matching it. A variable the user named explicitly (a name or NAME=value) that matches `deny`
// is an error rather than a silent omission.
// Errors: kInvalidArgument naming the variable and the pattern.
Result<std::map<std::string, std::string>> SelectEnv(
    const std::map<std::string, std::string>& environment, const ExportSpec& spec,
    const std::vector<std::string>& deny, std::vector<std::string>* dropped);

// Removes the variables of `env` that match `deny`; returns their names in order.
std::vector<std::string> DropDenied(std::map<std::string, std::string>& env,
                                    const std::vector<std::string>& deny);

}  // namespace pinpoint
