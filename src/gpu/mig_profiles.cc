#include "gpu/mig_profiles.h"

#include <cstdint>

namespace pinpoint::gpu {

namespace {

struct Profile {
  const char* name;
  uint64_t mem_mib;
  int sm_count;
  uint32_t id;  // NVML's profile id
  int compute_slices;
  int count;      // instances that fit at once
  int size;       // memory slices one covers
  int starts[7];  // its placements' first slices, then -1
};

// Memory as `nvidia-smi mig -lgip` lists it on an A100-SXM4-80GB (9.75, 19.62, 39.50, 79.25 GiB);
// ids and placements as `nvidia-smi mig -lgipp` does (the H100 80GB has the same grid).
constexpr Profile kA100Profiles[] = {
    {"1g.10gb", 9984, 14, 19, 1, 7, 1, {0, 1, 2, 3, 4, 5, 6}},
    {"1g.20gb", 20096, 14, 15, 1, 4, 2, {0, 2, 4, 6, -1, -1, -1}},
    {"2g.20gb", 20096, 28, 14, 2, 3, 2, {0, 2, 4, -1, -1, -1, -1}},
    {"3g.40gb", 40448, 42, 9, 3, 2, 4, {0, 4, -1, -1, -1, -1, -1}},
    {"4g.40gb", 40448, 56, 5, 4, 1, 4, {0, -1, -1, -1, -1, -1, -1}},
    {"7g.80gb", 81152, 98, 0, 7, 1, 8, {0, -1, -1, -1, -1, -1, -1}},
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

std::vector<MigProfileInfo> A100MigProfileInfos() {
  std::vector<MigProfileInfo> out;
  for (const Profile& p : kA100Profiles) {
    MigProfileInfo info{p.name,     p.id, p.compute_slices, p.count, p.mem_mib * 1024 * 1024,
                        p.sm_count, {}};
    for (int start : p.starts)
      if (start >= 0) info.placements.push_back({start, p.size});
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<std::string> A100MigProfileNames() {
  std::vector<std::string> names;
  for (const Profile& p : kA100Profiles) names.emplace_back(p.name);
  return names;
}

}  // namespace pinpoint::gpu
