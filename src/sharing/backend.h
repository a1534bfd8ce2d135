// sharing::Backend: everything a sharing mode does, behind one interface (docs/design.md, "Adding a
// sharing mode"). The scheduler learns a mode's placements from Rules(); the node asks the backend
// of an allocation's mode to prepare, adopt, release and stop each job's hold on a device, and
// hears its faults through Poll. Exclusive and timeslice are sharing/exclusive.h and
// sharing/timeslice.h; MPS is mps/mps_backend.h (MpsDaemons, EnvOnlyMps). Backends (backends.h)
// holds one per mode.
//
// Not thread-safe: the daemon's main loop owns every backend. No method may wait on anything a
// user controls (a daemon the user can stop, a file the user can write): work that can block
// runs asynchronously and reports through Poll.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/job_record.h"
#include "pinpoint/sharing_mode.h"
#include "pinpoint/status.h"
#include "sharing/applied.h"
#include "sharing/placement_rules.h"

namespace pinpoint::sharing {

// One job's hold on one device.
struct Slice {
  int device_index = 0;
  std::string device_uuid = "";
  uint32_t uid = 0;  // the Unix user the job runs as
  uint32_t gid = 0;
  uint64_t gpu_mem_bytes = 0;  // 0: the whole device
  int gpu_share_pct = 0;       // 0: no SM cap
  uint64_t job_id = 0;
  // The device's own memory and whether it is a MIG instance: what a hold on the whole of it
  // gets (Applies). 0: not known.
  uint64_t device_mem_bytes = 0;
  bool mig_instance = false;
  // Its job's service class's MPS client priority (config qos mps_client_priority): 0 normal,
  // 1 below normal. A mode without client priorities ignores it.
  int client_priority = 0;
};

// Something that happened to a device's sharing machinery (an MPS server), reported by Poll.
struct Event {
  enum class Kind {
    // A fatal GPU error hit the clients of uid's server on the device: that user's jobs served
    // there are its victims. A claim, from a log the user can write: it touches that user only.
    kFault,
    kServerDied,         // its server vanished and is being restarted (logged)
    kServerQuit,         // quit when idle or to pass the device on: waiting jobs may go
    kServerReady,        // a server that was starting now serves: waiting jobs may go
    kServerStartFailed,  // a start failed: the job that waited is told why at the next pass
    // uid's server stopped answering and was killed: its jobs there can no longer be served.
    kServerUnresponsive,
  };
  SharingMode mode = SharingMode::kMps;  // the backend that reported it
  int device_index = 0;
  Kind kind = Kind::kFault;
  uint32_t uid = 0;
  std::string detail = "";  // one line for people and the job history
};

// A device's server (MPS control daemon), as listings and metrics show it.
struct ServerInfo {
  int device_index = 0;
  bool running = false;     // false: it died and is being restarted
  uint32_t uid = 0;         // the user it serves
  int64_t control_pid = 0;  // 0 while none runs
  int clients = 0;
  int restarts = 0;
  std::string pipe_dir = "";
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual SharingMode mode() const = 0;
  // What the scheduler may place on a device of this mode. Fixed for the backend's life.
  virtual PlacementRules Rules() const = 0;
  // The mode a job's slot on a device of this mode is held in (Allocation::mode): a whole-device
  // slot is kExclusive; `devices` is how many devices the job takes. The default: whole-device
  // slots kExclusive, slices this mode.
  virtual SharingMode HoldsAs(uint64_t slot_gpu_mem_bytes, size_t devices) const {
    (void)devices;
    return slot_gpu_mem_bytes == 0 ? SharingMode::kExclusive : mode();
  }

  // The variables that make a job's processes use its slice, added to its environment before it
  // starts. Never waits. Errors: kFailedPrecondition: not now (a server is starting, or serves
  // another user): the job waits (reason mps-user) and is placed again once Poll reports
  // kServerReady or kServerQuit; kUnavailable: it cannot be served (the reason): the job fails.
  virtual Result<std::map<std::string, std::string>> Prepare(const Slice& slice) = 0;
  // What a hold of `slice` in this mode applies, resource by resource (gpu_mem, gpu_share): where
  // a process's value can be read back, the value given, and how strong the limit is
  // (docs/enforcement.md). Pure: it names what Prepare sets. The default, for a mode with no
  // variables of its own: a slice's memory held by pinpointd's watcher (a whole device's by the
  // device), no SM cap.
  virtual std::vector<AppliedLimit> Applies(const Slice& slice) const {
    return {slice.gpu_mem_bytes > 0 ? WatcherMemory(slice) : DeviceMemory(slice), NoSmCap()};
  }
  // The host paths a hold's processes must reach, from the environment Prepare gave it (`env`):
  // a container using the hold has each mounted at its own path. None by default.
  virtual std::vector<std::string> ClientPaths(
      const std::map<std::string, std::string>& env) const {
    (void)env;
    return {};
  }
  // The environment variables this mode sets (Prepare): the node drops them from every job's
  // request, so no job chooses its own server or limits.
  virtual std::vector<std::string> OwnVariables() const { return {}; }
  // A running job found again after a restart: its hold counts again (a dead server is started,
  // without waiting).
  virtual void Adopt(const Slice& slice) = 0;
  // The job holding `slice` has ended.
  virtual void Release(const Slice& slice) = 0;
  // Safe stop, step one, before any signal: lets go of the job's processes (`pids` lists them,
  // asked for only when needed) so no neighbour is left in an undefined state. Starts it and
  // returns; Stopping(slice.job_id) stays true until it has ended. Errors: kUnavailable (then
  // nothing is in flight).
  virtual Status StopClients(const Slice& slice,
                             const std::function<std::vector<int64_t>()>& pids) {
    (void)slice;
    (void)pids;
    return Status::Ok();
  }
  virtual bool Stopping(uint64_t job_id) const {
    (void)job_id;
    return false;
  }
  // Health checks, faults, starts and quits in flight; called each loop pass and when one of
  // WaitFds is readable.
  virtual std::vector<Event> Poll(int64_t now_ms) {
    (void)now_ms;
    return {};
  }
  // Readable when Poll has something to see; valid until the next call of any other method.
  virtual std::vector<int> WaitFds() const { return {}; }
  // After a fault, once the device's faulted jobs are gone: the next job gets a fresh server.
  virtual void ResetDevice(int device_index) { (void)device_index; }
  // The servers this backend runs, by device index.
  virtual std::map<int, ServerInfo> Servers() const { return {}; }
  // Starts slice.uid's server on the device now, with no job yet, and keeps it even while idle
  // (config mps_prestart_user). A mode without servers: nothing. A start that fails later is
  // reported by Poll. Errors: kUnavailable when it cannot be started at all.
  virtual Status Prestart(const Slice& slice) {
    (void)slice;
    return Status::Ok();
  }
};

}  // namespace pinpoint::sharing
