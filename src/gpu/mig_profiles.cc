#include "gpu/mig_profiles.h"

#include <cstdint>

namespace pinpoint::gpu {

namespace {

struct Profile {
  const char* name;
  uint64_t mem_mib;
  int sm_count;
};

// Memory as `nvidia-smi mig -lgip` lists it on an A100-SXM4-80GB (9.75, 19.62, 39.50, 79.25 GiB).
constexpr Profile kA100Profiles[] = {
    {"1g.10gb", 9984, 14},  {"1g.20gb", 20096, 14}, {"2g.20gb", 20096, 28},
    {"3g.40gb", 40448, 42}, {"4g.40gb", 40448, 56}, {"7g.80gb", 81152, 98},
};

}  // namespace

std::optional<MigInfo> A100MigProfile(const std::string& profile) {
  for (const Profile& p : kA100Profiles) {
    if (profile == p.name) {
      MigInfo mig;
      mig.profile = p.name;
      mig.mem_total_bytes = p.mem_mib * 1024 * 1024;
      mig.sm_count = p.sm_count;
      return mig;
    }
  }
  return std::nullopt;
}

std::vector<std::string> A100MigProfileNames() {
  std::vector<std::string> names;
  for (const Profile& p : kA100Profiles) names.emplace_back(p.name);
  return names;
}

}  // namespace pinpoint::gpu
