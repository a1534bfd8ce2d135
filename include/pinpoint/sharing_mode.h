// How a device is shared among jobs: the one sharing mode of the daemon, its scheduler, its
// records and its API. What each mode does is its backend's (src/sharing/backend.h); the words
// are the codecs' (SharingModeName).
#pragma once

#include <optional>
#include <string>

namespace pinpoint {

// A device's mode, and the mode an allocation of a job holds a device in:
//   kExclusive: one job at a time, whatever it asked for (an allocation: alone on its device).
//   kTimeslice: several jobs at once, time-sliced by the driver, nothing enforced.
//   kMps:       several jobs at once as clients of one MPS server of one Unix user, with pinned
//               memory and SM limits (an allocation: a slice of one device).
// docs/design.md, "Adding a sharing mode", says what a new value takes.
enum class SharingMode { kExclusive, kTimeslice, kMps };

const char* SharingModeName(SharingMode mode);  // "exclusive", "timeslice", "mps"
std::optional<SharingMode> SharingModeFromName(const std::string& name);

}  // namespace pinpoint
