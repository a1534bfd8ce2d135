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

}  // namespace pinpoint::partition
