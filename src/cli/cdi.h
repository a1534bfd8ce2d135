// `pinpoint cdi` (docs/containers.md): opens a lease on a slice and writes its Container Device
// Interface spec (cdi/spec.h) for a container runtime.
#pragma once

#include <iosfwd>
#include <string>

#include "cdi/spec.h"
#include "pinpoint/status.h"

namespace pinpoint::cli {

struct CdiArgs {
  int gpus = 1;
  std::string gpu_mem, gpu_share, user, name;
  std::string time;  // submit --time's forms; "": the node's default
  std::string cdi_dir = cdi::kDefaultDir;
};

// Opens the lease and writes its spec; prints the CDI device name (or, with json_output,
// {"device", "lease", "spec"}). On a spec that cannot be written the lease is closed again.
// Errors: the daemon's, cdi::SpecDir::Write's, cdi::CheckHookPath's.
Result<int> RunCdi(const std::string& socket, bool json_output, const CdiArgs& args,
                   std::ostream& out);

}  // namespace pinpoint::cli
