#include "gpu/gpu_backend.h"

namespace pinpoint::gpu {

const char* ComputeModeName(ComputeMode mode) {
  switch (mode) {
    case ComputeMode::kDefault:
      return "default";
    case ComputeMode::kExclusiveThread:
      return "exclusive_thread";
    case ComputeMode::kProhibited:
      return "prohibited";
    case ComputeMode::kExclusiveProcess:
      return "exclusive_process";
    case ComputeMode::kUnknown:
      break;
  }
  return "unknown";
}

}  // namespace pinpoint::gpu
