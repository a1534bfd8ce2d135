#include "sched/inventory.h"

#include <utility>

#include "common/enum_names.h"

namespace pinpoint::sched {

namespace {

constexpr std::pair<SlicePlacement, const char*> kSlicePlacements[] = {
    {SlicePlacement::kSpread, "spread"},
    {SlicePlacement::kPack, "pack"},
    {SlicePlacement::kAuto, "auto"},
};

}  // namespace

const char* SlicePlacementName(SlicePlacement placement) {
  return NameIn(kSlicePlacements, placement);
}

std::optional<SlicePlacement> SlicePlacementFromName(const std::string& name) {
  return ValueIn(kSlicePlacements, name);
}

}  // namespace pinpoint::sched
