// Binding a process to host CPUs (LaunchSpec::cpus, a job's cpuset): what the shim does before it
// forks the job, so that every process of the job inherits the CPUs.
#pragma once

#include <vector>

#include "pinpoint/status.h"

namespace pinpoint::launch {

// Binds the calling process to `cpus` (ids of 0 to CPU_SETSIZE - 1; others are left out); empty:
// nothing changes. Errors: kIo with the kernel's reason and the list ("cannot bind to CPUs 2-3:
// Invalid argument").
Status BindToCpus(const std::vector<int>& cpus);
// Lets the calling process use every CPU of the machine (those the kernel's cpuset for its cgroup
// allows among them): what a process started by a daemon pinned to a few CPUs does first.
void ResetCpus();

}  // namespace pinpoint::launch
