#include "sched/inventory.h"

#include <utility>

#include "common/enum_names.h"

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

namespace {

constexpr std::pair<SlicePlacement, const char*> kSlicePlacements[] = {
    {SlicePlacement::kSpread, "spread"},
    {SlicePlacement::kPack, "pack"},
    {SlicePlacement::kAuto, "auto"},
};

}  // namespace

const char* SlicePlacementName(SlicePlacement placement) { return NameIn(kSlicePlacements, placement); }

std::optional<SlicePlacement> SlicePlacementFromName(const std::string& name) {
  return ValueIn(kSlicePlacements, name);
}

}  // namespace pinpoint::sched
