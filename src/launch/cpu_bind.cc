#include "launch/cpu_bind.h"

#include <sched.h>
#include <unistd.h>

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

void ResetCpus() {
  cpu_set_t every;
  CPU_ZERO(&every);
  long cpus = ::sysconf(_SC_NPROCESSORS_CONF);
  for (long cpu = 0; cpu < cpus && cpu < CPU_SETSIZE; ++cpu) CPU_SET(static_cast<int>(cpu), &every);
  (void)::sched_setaffinity(0, sizeof(every), &every);  // best effort: the CPUs it had stay
}

}  // namespace pinpoint::launch
