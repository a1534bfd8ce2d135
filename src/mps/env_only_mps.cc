#include "mps/env_only_mps.h"

#include "common/file_util.h"

namespace pinpoint::mps {

Result<std::map<std::string, std::string>> EnvOnlyMps::Prepare(const sharing::Slice& slice) {
  if (slice.device_uuid.empty() || slice.device_uuid.find('/') != std::string::npos)
    return Internal("bad device uuid '" + slice.device_uuid + "'");
  std::string dir = mps_root_ + "/" + slice.device_uuid;
  Status s = MakeDirs(dir + "/pipe", 0755);
  if (s.ok()) s = MakeDirs(dir + "/log", 0755);
  if (!s.ok()) return Unavailable("cannot prepare MPS directories: " + s.message());
  return ClientEnvironment(dir + "/pipe", dir + "/log", slice);
}

}  // namespace pinpoint::mps
