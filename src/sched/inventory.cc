#include "sched/inventory.h"

namespace pinpoint::sched {

const char* SharingModeName(SharingMode mode) {
  switch (mode) {
    case SharingMode::kExclusive:
      return "exclusive";
    case SharingMode::kTimeslice:
      return "timeslice";
    case SharingMode::kMps:
      return "mps";
  }
  return "mps";
}

std::optional<SharingMode> SharingModeFromName(const std::string& name) {
  for (SharingMode mode : {SharingMode::kExclusive, SharingMode::kTimeslice, SharingMode::kMps}) {
    if (name == SharingModeName(mode)) {
      return mode;
    }
  }
  return std::nullopt;
}

}  // namespace pinpoint::sched
