// The Container Device Interface spec of a lease (docs/containers.md): its names, its contents,
// writing it and removing it. The one home of these, used by `pinpoint cdi`, pinpoint-cdi-hook,
// pinpoint-k8s and pinpointd (which removes an ended lease's spec through LeaseSpecs).
//
//   pinpoint cdi --gpu-mem 5G --gpu-share 20 [--user alice]   opens a lease, writes
//       <cdi-dir>/pinpoint.io-slice-L42.json and prints pinpoint.io/slice=L42
//   podman run --device pinpoint.io/slice=L42 ...            the runtime applies the spec; its
//       createRuntime hook runs `pinpoint-cdi-hook attach 42`, its poststop hook
//       `pinpoint-cdi-hook close 42`
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "pinpoint/api.h"
#include "pinpoint/status.h"

namespace pinpoint::cdi {

inline constexpr char kKind[] = "pinpoint.io/slice";
inline constexpr char kVersion[] = "0.5.0";
inline constexpr char kDefaultDir[] = "/var/run/cdi";

std::string DeviceName(JobId lease);     // "L42"
std::string QualifiedName(JobId lease);  // "pinpoint.io/slice=L42"
std::string SpecFileName(JobId lease);   // "pinpoint.io-slice-L42.json"

// The CDI spec of lease `lease` (cdiVersion kVersion, kind kKind, one device). Device nodes
// appear at /dev/<name> inside, from their host paths; mounts are bind mounts; the hooks run
// `hook_path` with the socket and the spec directory, so they reach the same pinpointd and
// remove the same file.
nlohmann::json Spec(JobId lease, const LeaseEdits& edits, const std::string& hook_path,
                    const std::string& socket, const std::string& cdi_dir);

// The hook a spec names is run as root by the container runtime: `path`, links resolved, must
// be a regular file, and it and every directory above it owned by root (or `uid`) and writable
// by no one else (a sticky directory, /tmp, may be: no one else can swap what root owns there).
// Returns the resolved path (what the spec names). Errors: kFailedPrecondition naming the
// component.
Result<std::string> CheckHookPath(const std::string& path, uint32_t uid);

// What pinpointd needs of the specs: removing an ended lease's. Implementations are not
// thread-safe.
class LeaseSpecs {
 public:
  virtual ~LeaseSpecs() = default;
  // Removes lease `lease`'s spec; ok when there is none. Errors: kIo.
  virtual Status Remove(JobId lease) = 0;
};

// The specs of one directory, named by SpecFileName. Nothing is followed through a link: the
// directory is opened O_NOFOLLOW, a spec is written beside its name and renamed over it, and
// removed with unlinkat.
class SpecDir final : public LeaseSpecs {
 public:
  explicit SpecDir(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }
  std::string PathOf(JobId lease) const { return dir_ + "/" + SpecFileName(lease); }

  // Writes `spec` (indented, one trailing newline) as lease `lease`'s, mode 0644, creating the
  // directory (0755) when missing. The directory must be owned by this process's user or root
  // and writable by no one else. Errors: kInvalidArgument (a relative dir), kFailedPrecondition
  // (an unsafe dir), kIo.
  Status Write(JobId lease, const nlohmann::json& spec);
  // Errors: kIo (the directory cannot be opened, other than missing; unlinkat failed).
  Status Remove(JobId lease) override;

 private:
  std::string dir_;
};

}  // namespace pinpoint::cdi
