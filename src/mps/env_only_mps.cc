#include "mps/env_only_mps.h"

#include "common/file_util.h"

namespace pinpoint::mps {

std::string PinnedMemLimitValue(uint64_t gpu_mem_bytes) {
  uint64_t mib = gpu_mem_bytes >> 20;
  if (mib == 0) mib = 1;
  return "0=" + std::to_string(mib) + "M";
}

std::map<std::string, std::string> ClientEnvironment(const std::string& pipe_dir,
                                                     const std::string& log_dir,
                                                     const ClientSlice& slice) {
  std::map<std::string, std::string> env{
      {"CUDA_MPS_PIPE_DIRECTORY", pipe_dir},
      {"CUDA_MPS_LOG_DIRECTORY", log_dir},
      {"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", PinnedMemLimitValue(slice.gpu_mem_bytes)},
  };
  if (slice.gpu_share_pct > 0)
    env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = std::to_string(slice.gpu_share_pct);
  return env;
}

Result<std::map<std::string, std::string>> EnvOnlyMps::PrepareClient(const ClientSlice& slice) {
  if (slice.device_uuid.empty() || slice.device_uuid.find('/') != std::string::npos)
    return Internal("bad device uuid '" + slice.device_uuid + "'");
  std::string dir = mps_root_ + "/" + slice.device_uuid;
  Status s = MakeDirs(dir + "/pipe", 0755);
  if (s.ok()) s = MakeDirs(dir + "/log", 0755);
  if (!s.ok()) return Unavailable("cannot prepare MPS directories: " + s.message());
  return ClientEnvironment(dir + "/pipe", dir + "/log", slice);
}

}  // namespace pinpoint::mps
