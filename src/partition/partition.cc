#include "partition/partition.h"

namespace pinpoint::partition {

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kGpu: return "gpu";
    case Kind::kMigInstance: return "mig-instance";
    case Kind::kMigSlot: return "mig-slot";
  }
  return "gpu";
}

const char* MigActionName(MigAction action) {
  switch (action) {
    case MigAction::kCreate: return "create";
    case MigAction::kDestroy: return "destroy";
  }
  return "create";
}

std::optional<MigAction> MigActionFromName(std::string_view name) {
  for (MigAction a : {MigAction::kCreate, MigAction::kDestroy})
    if (name == MigActionName(a)) return a;
  return std::nullopt;
}

}  // namespace pinpoint::partition
