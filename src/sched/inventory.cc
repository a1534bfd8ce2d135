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

const char* SlicePlacementName(SlicePlacement placement) {
  switch (placement) {
    case SlicePlacement::kSpread:
      return "spread";
    case SlicePlacement::kPack:
      return "pack";
    case SlicePlacement::kAuto:
      return "auto";
  }
  return "auto";
}

std::optional<SlicePlacement> SlicePlacementFromName(const std::string& name) {
  for (SlicePlacement p : {SlicePlacement::kSpread, SlicePlacement::kPack, SlicePlacement::kAuto}) {
    if (name == SlicePlacementName(p)) {
      return p;
    }
  }
  return std::nullopt;
}

}  // namespace pinpoint::sched
