#include "launch/cpu_bind.h"

#include <sched.h>

#include <cerrno>

#include "common/cpu_list.h"
#include "common/file_util.h"

namespace pinpoint::launch {

Status BindToCpus(const std::vector<int>& cpus) {
  if (cpus.empty()) return Status::Ok();
  cpu_set_t mask;
  CPU_ZERO(&mask);
  for (int cpu : cpus)
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &mask);
  if (::sched_setaffinity(0, sizeof(mask), &mask) == 0) return Status::Ok();
  return IoError("cannot bind to CPUs " + FormatCpuList(cpus) + ": " + ErrnoText(errno));
}

}  // namespace pinpoint::launch
