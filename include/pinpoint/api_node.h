// The pinpointd socket API, the node's ops (docs/api.md "gpus", "logs"): what `pinpoint gpus`
// shows of the devices, their MPS daemons, MIG slots and the host, and a job's output. Part of
// api.h, which every client includes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pinpoint/api_jobs.h"
#include "pinpoint/service_class.h"

namespace pinpoint {

// A device's MPS control daemon (docs/mps.md, "Inspecting").
struct MpsDaemonView {
  bool running = false;  // false: it died and is being started again
  uint32_t uid = 0;      // whom it serves
  int64_t control_pid = 0;
  int clients = 0;
  int restarts = 0;
  std::string pipe_dir;
};

// A running job's part of one device.
struct DeviceJobView {
  JobId id = 0;
  std::string user;
  std::string name;
  uint64_t gpu_mem_bytes = 0;  // the slice; 0 = the whole device
  int gpu_share_pct = 0;
  SharingMode mode = SharingMode::kExclusive;  // how it holds the device
  std::optional<uint64_t> gpu_mem_used_bytes;  // the watcher's last poll; nullopt before one
  uint64_t gpu_mem_peak_bytes = 0;
  uint64_t energy_mj = 0;
};

// The watcher's last reading of a physical GPU.
struct GpuReadingView {
  uint64_t mem_used_bytes = 0;
  uint64_t power_mw = 0;
  uint64_t energy_mj = 0;    // the GPU's counter
  int utilization_pct = -1;  // -1: unsupported
};

// A slot of a GPU in mig-dynamic mode (docs/scheduling.md "Dynamic MIG"): the memory slice its
// MIG instance starts at, and whether that instance exists now.
struct MigSlotView {
  int start = 0;
  bool vacant = false;
};

// Processes that hold a device after the job that had it ended (docs/security.md): its slot stays
// taken until they are gone; its user's processes in no job are killed at deadline_ms.
struct DeviceHoldView {
  JobId job = 0;              // the ended job
  std::string user;           // the job's user, whose processes they are
  std::vector<int64_t> pids;  // seen on this device's GPU at the last poll
  bool in_job = false;        // the job's own processes (escaped its end: killed at once)
  int64_t since_ms = 0;       // the job's end
  int64_t deadline_ms = -1;   // when its user's processes in no job are killed; -1: never
  bool killed = false;        // they were sent SIGKILL: the deadline passed
  // Of pids, those that hold on although due to be killed: pinpointd may not kill them (they run
  // with another user's rights: set-user-id) or they outlived their SIGKILL. The device is
  // drained (DeviceView::drain_reason) until they exit.
  std::vector<int64_t> unkillable;
  bool operator==(const DeviceHoldView&) const = default;
};

struct DeviceView {
  int index = 0;  // pinpoint's device index, Allocation::device_index
  std::string uuid;
  std::string name;
  int gpu_index = 0;  // the physical GPU's NVML index
  bool is_mig = false;
  SharingMode mode = SharingMode::kMps;
  bool drained = false;
  std::optional<std::string> drain_reason;  // set when drained by faults
  bool recovering = false;  // after a fatal MPS fault, until the jobs it hit have ended
  uint64_t mem_bytes = 0;   // allocatable
  int sm_count = 0;         // 0: unknown
  uint64_t mem_allocated_bytes = 0;
  uint64_t mem_free_bytes = 0;
  int share_free_pct = 0;
  std::optional<std::string> mps_user;  // whose MPS slices hold it
  std::optional<MpsDaemonView> mps;     // while it has an MPS control daemon
  std::vector<DeviceJobView> jobs;
  std::optional<GpuReadingView> reading;   // nullopt for MIG instances and unread GPUs
  std::optional<MigSlotView> mig_slot;     // set for a slot of a mig-dynamic GPU
  std::vector<DeviceHoldView> holds = {};  // processes of ended jobs still on it
};

// A change pinpoint made to a mig-dynamic GPU's MIG layout (store::MigChange).
struct MigChangeView {
  int64_t at_ms = 0;
  int gpu = 0;         // NVML index
  std::string action;  // "create" | "destroy"
  std::string profile;
  int start = 0;             // the placement's first memory slice
  uint32_t instance_id = 0;  // the GPU instance
  std::string uuid;          // its MIG device
  JobId for_job = 0;         // the waiting job it was made for; 0: none
  std::string result;        // "ok", or the error's one line
};

struct WatcherView {
  int64_t polls = 0;
  int64_t poll_time_ms = 0;  // the last poll's time
  int64_t last_poll_us = 0;  // how long it took
};

// Host resources as pinpoint counts them, and what running jobs reserve.
struct HostView {
  int cpus = 0;
  int cpus_allocated = 0;
  uint64_t mem_bytes = 0;
  uint64_t mem_allocated_bytes = 0;
};

struct GpusReply {
  std::string backend;
  std::string driver;
  bool simulated = false;  // no real GPU is used
  std::vector<DeviceView> devices;
  std::optional<WatcherView> watcher;  // nullopt: the daemon runs without one
  HostView host;
  // The latest MIG layout changes on mig-dynamic GPUs, oldest first (at most 32); none without.
  std::vector<MigChangeView> mig_changes = {};
};
struct GpusRequest {
  static constexpr char kOp[] = "gpus";
  using Reply = GpusReply;
};

// "qos": the node's service classes (config qos, docs/scheduling.md "Service classes"), as its
// configuration defines them, and the one a job that names none runs in. Anyone may ask.
struct QosReply {
  std::vector<ServiceClass> classes;
  std::string default_qos;
};
struct QosRequest {
  static constexpr char kOp[] = "qos";
  using Reply = QosReply;
};

enum class LogStream { kStdout, kStderr };

// A piece of the stream: its tail, or with from_offset the bytes from there on. Invalid UTF-8
// arrives as U+FFFD.
struct LogsReply {
  JobId id = 0;
  LogStream stream = LogStream::kStdout;
  std::string data;
  // The byte offset in the file just past `data`: the from_offset that continues the stream.
  uint64_t end_offset = 0;
  // The job has ended and `data` reaches the end of its file: nothing more will come.
  bool ended = false;
};
inline constexpr uint64_t kLogsDefaultMaxBytes = 256 * 1024;
inline constexpr uint64_t kLogsMaxBytes = 512 * 1024;
inline constexpr int kLogsMaxTailLines = 1'000'000;
// Followers (requests with `follow` that wait for output) the daemon holds at once: in all, and
// for one non-root uid. One past the cap is refused with kUnavailable. The last places of
// kLogsMaxFollowers are root's (RootReserve in src/common/root_reserve.h).
inline constexpr size_t kLogsMaxFollowers = 128;
inline constexpr size_t kLogsMaxFollowersPerUid = 8;
struct LogsRequest {
  static constexpr char kOp[] = "logs";
  using Reply = LogsReply;
  JobId id = 0;
  LogStream stream = LogStream::kStdout;
  uint64_t max_bytes = kLogsDefaultMaxBytes;  // at most kLogsMaxBytes
  // The tail only: at most this many last lines of the last max_bytes (0: all of them); at most
  // kLogsMaxTailLines.
  int tail_lines = 0;
  // Read forward from this byte offset (a reply's end_offset) instead of the tail.
  std::optional<uint64_t> from_offset = std::nullopt;
  // With from_offset: when nothing new is there yet and the job has not ended, the reply waits
  // until there is output or the job has ended.
  bool follow = false;
};

}  // namespace pinpoint
