#include "partition/partition.h"

namespace pinpoint::partition {

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kGpu:
      return "gpu";
    case Kind::kMigInstance:
      return "mig-instance";
    case Kind::kMigSlot:
      return "mig-slot";
  }
  return "gpu";
}

ProfileMemory::ProfileMemory(std::initializer_list<std::pair<const std::string, uint64_t>> offers) {
  for (const auto& [profile, bytes] : offers) Add(profile, bytes);
}

void ProfileMemory::Add(const std::string& profile, uint64_t bytes) {
  if (profile.empty()) return;
  uint64_t& most = most_[profile];
  if (bytes > most) most = bytes;
}

std::optional<uint64_t> ProfileMemory::Of(const std::string& profile) const {
  auto it = most_.find(profile);
  if (it == most_.end()) return std::nullopt;
  return it->second;
}

uint64_t ProfileMemory::Most() const {
  uint64_t most = 0;
  for (const auto& [profile, bytes] : most_)
    if (bytes > most) most = bytes;
  return most;
}

std::string ProfileMemory::Names() const {
  std::string names;
  for (const auto& [profile, bytes] : most_) names += (names.empty() ? "" : ", ") + profile;
  return names;
}

const char* MigActionName(MigAction action) {
  switch (action) {
    case MigAction::kCreate:
      return "create";
    case MigAction::kDestroy:
      return "destroy";
  }
  return "create";
}

std::optional<MigAction> MigActionFromName(std::string_view name) {
  for (MigAction a : {MigAction::kCreate, MigAction::kDestroy})
    if (name == MigActionName(a)) return a;
  return std::nullopt;
}

}  // namespace pinpoint::partition
