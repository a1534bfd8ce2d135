#include "sched/array_limits.h"

#include <algorithm>
#include <limits>
#include <string>

namespace pinpoint::sched {

ArrayLimits::ArrayLimits(const std::vector<RunningJob>& running) {
  for (const RunningJob& job : running) {
    if (job.array_id != 0) ++running_[job.array_id];
  }
}

std::optional<Wait> ArrayLimits::Check(const Demand& demand) const {
  if (demand.array_id == 0 || demand.array_limit <= 0) return std::nullopt;
  auto it = running_.find(demand.array_id);
  int running = it == running_.end() ? 0 : it->second;
  if (running < demand.array_limit) return std::nullopt;
  std::string limit = std::to_string(demand.array_limit);
  return Wait{demand.id, Reason::kArrayLimit,
              "array " + std::to_string(demand.array_id) + " runs " + std::to_string(running) +
                  " task" + (running == 1 ? "" : "s") + ", its limit (%" + limit + ")",
              std::nullopt};
}

int ArrayLimits::Room(const Demand& demand) const {
  if (demand.array_id == 0 || demand.array_limit <= 0) return std::numeric_limits<int>::max();
  auto it = running_.find(demand.array_id);
  return std::max(0, demand.array_limit - (it == running_.end() ? 0 : it->second));
}

void ArrayLimits::Started(const Demand& demand) {
  if (demand.array_id != 0) ++running_[demand.array_id];
}

}  // namespace pinpoint::sched
