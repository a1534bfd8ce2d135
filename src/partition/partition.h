// What a device of the node is, apart from how it is shared (docs/design.md, "What a device is").
// A device is a whole GPU, a MIG instance, or a slot of a GPU in mig-dynamic mode where pinpoint
// makes and unmakes instances (daemon/mig): a slot holds the instance that starts at its memory
// slice, or is vacant. How a device is shared (exclusive, time-sliced, MPS) is its sharing mode,
// a sharing::Backend, the same over any partition: MPS inside a MIG instance is the MPS backend
// over a smaller device. Plain data, no I/O.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace pinpoint::partition {

enum class Kind {
  kGpu,          // a whole physical GPU
  kMigInstance,  // a MIG instance an admin made (the GPU in MIG mode, not pinpoint's to change)
  kMigSlot,      // a slot of a mig-dynamic GPU: the instance that starts there, or none yet
};

const char* KindName(Kind kind);  // "gpu" | "mig-instance" | "mig-slot"

struct Partition {
  Kind kind = Kind::kGpu;
  // The instance's profile ("1g.10gb"); "" for a GPU, a vacant slot, or a profile not known.
  std::string profile = "";
  // kMigSlot: the memory slice its instance starts at (its place on the GPU); -1 otherwise.
  int start = -1;
  // kMigSlot: no instance there (yet). Nothing is placed on a vacant slot.
  bool vacant = false;

  static Partition Gpu() { return Partition{}; }
  static Partition Instance(std::string profile) {
    return Partition{.kind = Kind::kMigInstance, .profile = std::move(profile)};
  }
  // A slot at `start` holding an instance of `profile`, or vacant when `profile` is "".
  static Partition Slot(int start, std::string profile) {
    bool vacant = profile.empty();
    return Partition{
        .kind = Kind::kMigSlot, .profile = std::move(profile), .start = start, .vacant = vacant};
  }

  // Part of a GPU: whole-GPU requests never land on it, and its SMs are its own.
  bool is_mig() const { return kind != Kind::kGpu; }
  // Its instance may come and go (pinpoint's to make): a job pinned to it could wait forever.
  bool is_slot() const { return kind == Kind::kMigSlot; }
  // Whether anything may be placed on it now.
  bool usable() const { return !vacant; }
  // Whether a slice that asks for MIG profile `wanted` ("": any device) may run on it.
  bool Offers(const std::string& wanted) const { return wanted.empty() || wanted == profile; }
};

// The memory slices [begin, end) of a GPU that one MIG instance covers (its placement's first
// slice and its profile's size). Every test of whether two instances, or an instance and a
// planned drain, share memory slices is Overlaps.
struct SliceRange {
  int begin = 0;
  int end = 0;
  bool Overlaps(const SliceRange& other) const { return begin < other.end && other.begin < end; }
  bool operator==(const SliceRange&) const = default;
};

// The device memory pinpoint keeps back on every device, whole GPU, MIG instance or slot, for
// the driver and the MPS server (config gpu_mem_reserve): a device of `total` bytes offers
// slices its total less the reserve, and a slice of `asked` bytes needs a device of the two
// together. Every sum or difference with the reserve is one of these two.
struct MemoryReserve {
  uint64_t bytes = 0;
  uint64_t Offered(uint64_t total) const { return total > bytes ? total - bytes : 0; }
  uint64_t Needed(uint64_t asked) const {
    return asked > UINT64_MAX - bytes ? UINT64_MAX : asked + bytes;
  }
};

// The MIG profiles a slice may name on a node (`submit --mig`), each with the most device memory
// a device of it offers (MemoryReserve::Offered): the instances there are and those a
// mig-dynamic GPU could make. What a profile gives a slice is looked up here and nowhere else.
class ProfileMemory {
 public:
  ProfileMemory() = default;
  ProfileMemory(std::initializer_list<std::pair<const std::string, uint64_t>> offers);

  // A device of `profile` that offers `bytes`: kept when no other of the profile offers more.
  // A profile without a name (NVML named none) is no profile a slice can ask for: ignored.
  void Add(const std::string& profile, uint64_t bytes);
  // The most a device of `profile` offers; none when the node has no such profile.
  std::optional<uint64_t> Of(const std::string& profile) const;
  // The most any profile offers; 0 when the node has none.
  uint64_t Most() const;
  // The profiles' names in order, joined by ", "; "" when there are none.
  std::string Names() const;
  bool empty() const { return most_.empty(); }

 private:
  std::map<std::string, uint64_t> most_;
};

// A change pinpoint makes to a mig-dynamic GPU's layout (daemon/mig/mig_dynamic.h).
enum class MigAction {
  kCreate,   // make an instance of a profile at a memory slice
  kDestroy,  // destroy the instance there
};

// "create" | "destroy": the word the store, the API and the metrics use.
const char* MigActionName(MigAction action);
std::optional<MigAction> MigActionFromName(std::string_view name);

}  // namespace pinpoint::partition
