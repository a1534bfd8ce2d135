// What a container needs to use its lease (docs/containers.md): the environment a job on the
// same slice would get, the GPU device nodes of its allocations, and the paths its holds' clients
// reach (an MPS pipe directory).
// Pure: the caller says which device nodes exist.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "pinpoint/api.h"
#include "sched/inventory.h"

namespace pinpoint::daemon {

// `env`: the lease's environment as "NAME=value" (JobRunner::JobEnvironment); `device_dir`: where
// the nodes are ("/dev", or a simulated node's stand-ins). Device nodes: nvidia<gpu_index> of each
// allocation's physical GPU, then nvidiactl, nvidia-uvm, nvidia-uvm-tools; each only when
// `exists` says so. `client_paths` (what the holds' backends name: sharing::Backend::ClientPaths,
// an MPS pipe directory) are each mounted at their own path. PINPOINT_* and CUDA_* variables
// only: nothing of the daemon's own environment.
LeaseEdits LeaseEditsOf(const std::vector<std::string>& env,
                        const std::vector<Allocation>& allocations,
                        const sched::Inventory& inventory, const std::string& device_dir,
                        const std::function<bool(const std::string&)>& exists,
                        const std::vector<std::string>& client_paths);

}  // namespace pinpoint::daemon
