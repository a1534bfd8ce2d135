// MpsControl: what pinpoint needs from NVIDIA MPS. One MPS control daemon per device (GPU or MIG
// instance) and Unix user, each with its own pipe and log directory under pinpointd's state
// directory, so only jobs that carry that pipe directory in their environment become its
// clients (docs/mps.md).
//
// Implementations: MpsDaemons (real: runs nvidia-cuda-mps-control), EnvOnlyMps (environment only,
// for nodes without MPS, e.g. the simulated node) and FakeMps (tests, scripted faults).
// Not thread-safe: the daemon's main loop owns it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pinpoint/status.h"

namespace pinpoint::mps {

// One client's slice on one device.
struct ClientSlice {
  int device_index = 0;
  std::string device_uuid;
  uint32_t uid = 0;              // the Unix user the client runs as
  uint32_t gid = 0;
  uint64_t gpu_mem_bytes = 0;    // device memory, the CUDA context included
  int gpu_share_pct = 0;         // 0: no SM cap
};

// Something that happened to a device's MPS daemons, reported by Poll.
struct MpsEvent {
  enum class Kind {
    kFatalFault,    // a client hit a fatal GPU error: every client on the device gets an error
    kDaemonDied,    // the control daemon vanished (crash, SIGKILL); restarted at once
    kDaemonQuit,    // quit after being idle, or to pass the device to another user
    // The control daemon did not answer a health probe within its deadline (stopped, wedged on
    // a file its user planted): it and its servers were killed, and the device is free again.
    // Its user's clients on the device can no longer be served.
    kDaemonUnresponsive,
    kDaemonReady,        // a control daemon that was starting now serves: waiting jobs may go
    kDaemonStartFailed,  // a control daemon's start failed (detail says why)
  };
  int device_index = 0;
  Kind kind = Kind::kFatalFault;
  std::string detail;  // one line for people and the job history
  // The user whose MPS daemon reported it. A kFatalFault is that user's claim: it comes from a
  // log the user can write, so it may touch only that user's jobs (docs/security.md).
  uint32_t uid = 0;
};

// One device's MPS control daemon, as listings and metrics show it.
struct MpsDaemonInfo {
  int device_index = 0;
  bool running = false;     // its control daemon lives; false: it died and is being restarted
  uint32_t uid = 0;         // the user it serves
  int64_t control_pid = 0;  // 0 while none runs
  int clients = 0;          // jobs using it
  int restarts = 0;         // times it was started again after dying
  std::string pipe_dir;
};

class MpsControl {
 public:
  virtual ~MpsControl() = default;
  // Makes sure the device's MPS control daemon for slice.uid runs (starting it, or replacing an
  // idle one of another user) and returns the variables that make a process its client with the
  // slice's limits: CUDA_MPS_PIPE_DIRECTORY, CUDA_MPS_LOG_DIRECTORY,
  // CUDA_MPS_PINNED_DEVICE_MEM_LIMIT and, with a share, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE. The
  // process sees the device as CUDA device 0. Errors: kUnavailable when no daemon can be started
  // (the reason), kFailedPrecondition when another user's clients still use the device.
  // It never waits: while the device's daemon starts, or the previous user's daemon quits, it
  // answers kFailedPrecondition too (ask again after Poll reports kDaemonReady or kDaemonQuit).
  virtual Result<std::map<std::string, std::string>> PrepareClient(const ClientSlice& slice) = 0;
  // A running job found again after a restart: counts its client on the device, and starts the
  // device's daemon for slice.uid when none runs (without waiting).
  virtual void AdoptClient(const ClientSlice& slice) { (void)PrepareClient(slice); }
  // The job holding `slice` has ended; its device may be quit once idle.
  virtual void ReleaseClient(const ClientSlice& slice) = 0;
  // Safe cancel, step one: asks the device's MPS server to terminate each of `pids` that is its
  // client (terminate_client), so no client is killed by a signal with GPU work in flight.
  // Pids that are not clients are ignored. Starts the exchange and returns; Terminating(key)
  // stays true until it has ended (answered, failed, or past its deadline). Errors: kUnavailable
  // when the daemon cannot be asked (then nothing is in flight).
  virtual Status TerminateClients(const ClientSlice& slice, const std::vector<int64_t>& pids,
                                  uint64_t key) = 0;
  virtual bool Terminating(uint64_t key) const { (void)key; return false; }
  // Health check, fault detection, starts and quits in flight, idle quit; call often (each
  // main-loop pass, and when one of WaitFds is readable).
  virtual std::vector<MpsEvent> Poll(int64_t now_ms) = 0;
  // Descriptors that become readable when Poll has something to see (a start, a command or a
  // quit in flight); valid until the next call of any other method.
  virtual std::vector<int> WaitFds() const { return {}; }
  // After a fault, once the device's old clients are gone: quit its daemons so the next client
  // gets a fresh server.
  virtual void ResetDevice(int device_index) = 0;
  // The devices that have a control daemon, in ascending device index order.
  virtual std::vector<MpsDaemonInfo> Describe() const = 0;
  // Starts the device's control daemon for slice.uid now, with no client yet (config
  // mps_prestart_user), and keeps it even when idle. Without control daemons (env-only MPS):
  // nothing. Errors: kUnavailable when it cannot be started at all.
  virtual Status Prestart(const ClientSlice& slice) {
    (void)slice;
    return Status::Ok();
  }
};

// "0=1536M": the pinned device-memory limit for CUDA device 0, in whole MiB rounded down
// (at least 1).
std::string PinnedMemLimitValue(uint64_t gpu_mem_bytes);

}  // namespace pinpoint::mps
