// Where pinpoint's own helper programs are: pinpoint-shim for pinpointd; pinpoint-bench,
// pinpoint-slurm and pinpoint-htcondor for pinpoint.
#pragma once

#include <functional>
#include <string>

namespace pinpoint {

// The path of the helper `name` for the executable at `exe` (an absolute path): `name` beside
// `exe` when `executable` says it is there (a build tree, or everything installed in one
// directory), else <prefix>/libexec/pinpoint/<name> when `exe` is <prefix>/bin/<program> and
// that one is there (the Debian package, `make install`). When neither is, the path beside `exe`,
// so that the error names where it was looked for first. Pure: `executable` is asked, never the
// file system.
std::string CompanionPathFor(const std::string& exe, const std::string& name,
                             const std::function<bool(const std::string&)>& executable);

// CompanionPathFor with the running program (/proc/self/exe) and access(X_OK). `name` alone when
// /proc/self/exe cannot be read.
std::string CompanionPath(const std::string& name);

}  // namespace pinpoint
