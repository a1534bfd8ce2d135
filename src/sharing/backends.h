// sharing::Backends: the node's backends, one per sharing mode, and what the daemon asks of all
// of them at once (events, descriptors, a job being stopped, a device reset). The registration
// of the modes a daemon runs is daemon/setup/sharing_setup.cc (MakeBackends).
// Not thread-safe: the daemon's main loop owns it.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "sharing/backend.h"

namespace pinpoint::sharing {

class Backends {
 public:
  // Registers `backend` for its mode, replacing the one there.
  void Add(std::unique_ptr<Backend> backend);
  // The same for a backend owned elsewhere (not null; it must outlive this).
  void Use(Backend* backend);
  bool Has(SharingMode mode) const { return backends_.count(mode) > 0; }
  // The backend of `mode`. A mode with none registered gets one that refuses: its devices take
  // no slices and every Prepare is kUnavailable, naming the mode (never a silent fallback).
  Backend& For(SharingMode mode) const;

  // Every backend's OwnVariables.
  std::vector<std::string> OwnVariables() const;
  // Every backend's events since the last call, backend by backend.
  std::vector<Event> Poll(int64_t now_ms);
  std::vector<int> WaitFds() const;
  // Whether any backend is still stopping job `job_id`'s clients (Backend::Stopping).
  bool Stopping(uint64_t job_id) const;
  // Resets `device_index` in every backend (Backend::ResetDevice).
  void ResetDevice(int device_index);
  // Every backend's servers, by device index.
  std::map<int, ServerInfo> Servers() const;

 private:
  std::map<SharingMode, Backend*> backends_;
  std::vector<std::unique_ptr<Backend>> owned_;                       // those given by Add
  mutable std::map<SharingMode, std::unique_ptr<Backend>> refusing_;  // For's stand-ins
};

}  // namespace pinpoint::sharing
