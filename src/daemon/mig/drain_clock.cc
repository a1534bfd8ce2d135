#include "daemon/mig/drain_clock.h"

#include <algorithm>

namespace pinpoint::daemon {

int64_t DrainClock::Drains(JobId for_job, const std::vector<JobId>& waiting, int64_t now_ms) {
  std::erase_if(since_ms_, [&](const auto& entry) {
    return entry.first != for_job &&
           std::find(waiting.begin(), waiting.end(), entry.first) == waiting.end();
  });
  if (for_job == 0) return now_ms;
  return since_ms_.emplace(for_job, now_ms).first->second;
}

}  // namespace pinpoint::daemon
