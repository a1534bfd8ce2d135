#include "mps/mps_backend.h"

#include "pinpoint/units.h"

namespace pinpoint::mps {

SharingMode MpsHoldsAs(uint64_t slot_gpu_mem_bytes, size_t devices) {
  if (slot_gpu_mem_bytes == 0) return SharingMode::kExclusive;
  return devices > 1 ? SharingMode::kTimeslice : SharingMode::kMps;
}

std::vector<std::string> MpsVariables() {
  return {"CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT",
          "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "CUDA_MPS_CLIENT_PRIORITY"};
}

std::string PinnedMemLimitValue(uint64_t gpu_mem_bytes) {
  uint64_t mib = gpu_mem_bytes >> 20;
  if (mib == 0) mib = 1;
  return "0=" + std::to_string(mib) + "M";
}

std::vector<AppliedLimit> MpsApplies(const sharing::Slice& slice) {
  AppliedLimit mem{.resource = "gpu_mem",
                   .variable = "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT",
                   .expected = PinnedMemLimitValue(slice.gpu_mem_bytes),
                   .strength = LimitStrength::kDriver};
  mem.what =
      "MPS pinned device memory limit, in whole MiB (a client can raise its own; "
      "pinpointd's watcher stops the job above " +
      FormatSize(slice.gpu_mem_bytes) + ")";
  AppliedLimit share{.resource = "gpu_share", .variable = "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"};
  share.unobservable = "not measurable under MPS: NVML reports no SM use per MPS client";
  if (slice.gpu_share_pct > 0) {
    share.expected = std::to_string(slice.gpu_share_pct);
    share.strength = LimitStrength::kDriver;
    share.what = "MPS active thread percentage";
  } else {
    share.what = "no MPS active thread percentage: no SM cap";
  }
  // Set on every client, 0 too, so the value a process ran with can always be read back.
  AppliedLimit priority{.resource = "gpu_priority",
                        .variable = "CUDA_MPS_CLIENT_PRIORITY",
                        .expected = std::to_string(slice.client_priority),
                        .strength = LimitStrength::kDriver,
                        .what =
                            "MPS client priority (0 normal, 1 below normal), from the job's "
                            "service class"};
  return {mem, share, priority};
}

std::vector<std::string> MpsClientPaths(const std::map<std::string, std::string>& env) {
  auto pipe = env.find("CUDA_MPS_PIPE_DIRECTORY");
  if (pipe == env.end() || pipe->second.empty()) return {};
  return {pipe->second};
}

std::map<std::string, std::string> ClientEnvironment(const std::string& pipe_dir,
                                                     const std::string& log_dir,
                                                     const sharing::Slice& slice) {
  std::map<std::string, std::string> env{
      {"CUDA_MPS_PIPE_DIRECTORY", pipe_dir},
      {"CUDA_MPS_LOG_DIRECTORY", log_dir},
      {"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", PinnedMemLimitValue(slice.gpu_mem_bytes)},
  };
  if (slice.gpu_share_pct > 0)
    env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = std::to_string(slice.gpu_share_pct);
  env["CUDA_MPS_CLIENT_PRIORITY"] = std::to_string(slice.client_priority);
  return env;
}

}  // namespace pinpoint::mps
