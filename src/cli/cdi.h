// `pinpoint cdi` and `pinpoint-cdi-hook` (docs/containers.md): a lease on a slice, given to a
// container through a Container Device Interface spec.
//
//   pinpoint cdi --gpu-mem 5G --gpu-share 20 [--user alice]   opens a lease, writes
//       <cdi-dir>/pinpoint.io-slice-L42.json and prints pinpoint.io/slice=L42
//   podman run --device pinpoint.io/slice=L42 ...            the runtime applies the spec; its
//       createRuntime hook runs `pinpoint-cdi-hook attach 42`, its poststop hook
//       `pinpoint-cdi-hook close 42`
#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "pinpoint/api.h"
#include "pinpoint/status.h"

namespace pinpoint::cli {

inline constexpr char kCdiKind[] = "pinpoint.io/slice";
inline constexpr char kCdiVersion[] = "0.5.0";
inline constexpr char kDefaultCdiDir[] = "/var/run/cdi";

std::string CdiDeviceName(JobId lease);    // "L42"
std::string CdiQualifiedName(JobId lease);  // "pinpoint.io/slice=L42"
std::string CdiSpecFileName(JobId lease);  // "pinpoint.io-slice-L42.json"

// The CDI spec of lease `lease` (cdiVersion kCdiVersion, kind kCdiKind, one device). Device
// nodes appear at /dev/<name> inside, from their host paths; mounts are bind mounts; the hooks
// run `hook_path` with the socket and the spec directory, so they reach the same pinpointd and
// remove the same file.
nlohmann::json CdiSpec(JobId lease, const LeaseEdits& edits, const std::string& hook_path,
                       const std::string& socket, const std::string& cdi_dir);

// Writes `text` as <dir>/<name> atomically, without following a link (the directory is opened
// O_NOFOLLOW, the file written beside it and renamed), mode 0644. `dir` must be a directory
// owned by this process's user or root and writable by no one else. Errors: kInvalidArgument
// (a relative dir), kFailedPrecondition (an unsafe dir), kIo.
Status WriteCdiSpec(const std::string& dir, const std::string& name, const std::string& text);

struct CdiArgs {
  int gpus = 1;
  std::string gpu_mem, gpu_share, user, name;
  std::string cdi_dir = kDefaultCdiDir;
};

// `pinpoint cdi`: opens the lease and writes its spec; prints the CDI device name (or, with
// json_output, {"device", "lease", "spec", "edits"}). On a spec that cannot be written the lease
// is closed again. Errors: the daemon's, WriteCdiSpec's.
Result<int> RunCdi(const std::string& socket, bool json_output, const CdiArgs& args, std::ostream& out);

// `pinpoint-cdi-hook attach|close LEASE [--socket S] [--cdi-dir D]`, as an OCI hook: attach
// reads the container's state (JSON, at most 64 KiB) from `in`, takes its pid and its bundle's
// process.user.uid (config.json, at most 4 MiB, not through a link; 0 when it names no user)
// and attaches the lease with both;
// close closes it and removes the spec. Returns the exit code; one error line to `err`.
int RunCdiHook(int argc, char** argv, std::istream& in, std::ostream& err);

// The OCI state's pid and bundle (pure). Errors: kInvalidArgument naming the field.
struct OciState {
  int64_t pid = 0;
  std::string bundle;
};
Result<OciState> ParseOciState(const std::string& text);
// process.user.uid of an OCI config.json's text; 0 when it names no user (the OCI default).
// Errors: kInvalidArgument (not JSON, a uid that is not one).
Result<uint32_t> ParseOciUid(const std::string& text);

// The hook a spec names is run as root by the container runtime: `path`, links resolved, must
// be a regular file, and it and every directory above it owned by root (or `uid`) and writable
// by no one else (a sticky directory, /tmp, may be: no one else can swap what root owns there). Returns the resolved path (what the spec names). Errors: kFailedPrecondition
// naming the component.
Result<std::string> CheckHookPath(const std::string& path, uint32_t uid);

}  // namespace pinpoint::cli
