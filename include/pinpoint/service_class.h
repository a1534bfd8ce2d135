// Service classes (Slurm's QOS; docs/scheduling.md "Service classes"): what a site defines in its
// configuration (qos) and `pinpoint qos` lists. A job runs in one class (JobRequest::qos).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pinpoint {

// What is done to a job of a class when a job of a class that may preempt it needs its room.
// Stored and shown; preemption itself is not done yet (issue 56, later items).
enum class PreemptMode { kOff, kRequeue, kSuspend, kCancel };
// "off", "requeue", "suspend", "cancel".
const char* PreemptModeName(PreemptMode mode);
std::optional<PreemptMode> PreemptModeFromName(const std::string& name);

struct ServiceClass {
  std::string name = "";
  // Added to each of its jobs' own priority when the scheduler orders the queue.
  int priority = 0;
  // The classes whose jobs this class's jobs may preempt.
  std::vector<std::string> preempts = {};
  PreemptMode preempt_mode = PreemptMode::kOff;  // what its jobs get when preempted
  // Seconds between the job's --signal (or SIGTERM) and its preemption.
  int64_t grace_s = 0;
  // Who may use it: user names and "@group"s; empty: everyone. Root always may.
  std::vector<std::string> users = {};
  // CUDA_MPS_CLIENT_PRIORITY of its jobs' MPS clients: 0 normal, 1 below normal (docs/mps.md).
  int mps_client_priority = 0;
  bool operator==(const ServiceClass&) const = default;
};

// Bounds of a class's values (config qos, docs/admin.md).
inline constexpr int kMaxQosPriority = 1000000;
inline constexpr int64_t kMaxQosGraceS = 86400;
inline constexpr size_t kMaxServiceClasses = 64;

// The classes a node has when its configuration names none: "normal" (the default; may preempt
// scavenger) and "scavenger" (priority -1000, requeued when preempted, MPS client priority 1).
std::vector<ServiceClass> DefaultServiceClasses();
inline constexpr char kDefaultQos[] = "normal";

// The class named `name` in `classes`; nullptr when there is none.
const ServiceClass* FindServiceClass(const std::vector<ServiceClass>& classes,
                                     const std::string& name);

}  // namespace pinpoint
