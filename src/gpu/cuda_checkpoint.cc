#include "gpu/cuda_checkpoint.h"

#include <dlfcn.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace pinpoint::gpu {

namespace {

// The driver's types, declared here (the build machine has no cuda.h): CUresult is an int enum,
// and every args struct is 64 bytes, zeroed but for a lock's timeoutMs (its first field).
using CUresult = int;
constexpr CUresult kCudaSuccess = 0;
constexpr CUresult kCudaInvalidValue = 1;
constexpr CUresult kCudaIllegalState = 401;
constexpr CUresult kCudaNotSupported = 801;
struct alignas(8) CheckpointArgs {
  unsigned char bytes[64] = {};
};
static_assert(sizeof(CheckpointArgs) == 64);

using InitFn = CUresult (*)(unsigned int);
// The args as void*: the exact type the driver's functions are called through (an indirect call
// through another type is undefined, and UBSan's -fsanitize=function says so).
using ArgsFn = CUresult (*)(int, void*);
using StateFn = CUresult (*)(int, int*);
using ErrorNameFn = CUresult (*)(CUresult, const char**);

class DlCheckpointDriver : public CheckpointDriver {
 public:
  // The library it came from stays loaded (never dlclosed: the driver's threads may outlive it).
  DlCheckpointDriver(ArgsFn lock, ArgsFn checkpoint, ArgsFn restore, ArgsFn unlock, StateFn state,
                     ErrorNameFn error_name)
      : lock_(lock),
        checkpoint_(checkpoint),
        restore_(restore),
        unlock_(unlock),
        state_(state),
        error_name_(error_name) {}

  Status Lock(int pid, uint32_t timeout_ms) override {
    CheckpointArgs args;
    static_assert(sizeof(timeout_ms) == 4);
    __builtin_memcpy(args.bytes, &timeout_ms, sizeof(timeout_ms));
    return Check("cuCheckpointProcessLock", pid, lock_(pid, &args));
  }
  Status Checkpoint(int pid) override {
    CheckpointArgs args;
    return Check("cuCheckpointProcessCheckpoint", pid, checkpoint_(pid, &args));
  }
  Status Restore(int pid) override {
    CheckpointArgs args;
    return Check("cuCheckpointProcessRestore", pid, restore_(pid, &args));
  }
  Status Unlock(int pid) override {
    CheckpointArgs args;
    return Check("cuCheckpointProcessUnlock", pid, unlock_(pid, &args));
  }
  Result<CudaProcessState> State(int pid) override {
    int raw = -1;
    Status s = Check("cuCheckpointProcessGetState", pid, state_(pid, &raw));
    if (!s.ok()) return s;
    switch (raw) {
      case 0:
        return CudaProcessState::kRunning;
      case 1:
        return CudaProcessState::kLocked;
      case 2:
        return CudaProcessState::kCheckpointed;
      case 3:
        return CudaProcessState::kFailed;
      default:
        return CudaProcessState::kUnknown;
    }
  }

 private:
  Status Check(const char* call, int pid, CUresult r) const {
    if (r == kCudaSuccess) return Status::Ok();
    const char* name = nullptr;
    if (error_name_ == nullptr || error_name_(r, &name) != kCudaSuccess || name == nullptr)
      name = "CUDA error";
    std::string text = std::string(call) + "(pid " + std::to_string(pid) + "): " + name + " (" +
                       std::to_string(r) + ")";
    if (r == kCudaNotSupported || r == kCudaInvalidValue || r == kCudaIllegalState)
      return FailedPrecondition(text);
    return Unavailable(text);
  }

  ArgsFn lock_, checkpoint_, restore_, unlock_;
  StateFn state_;
  ErrorNameFn error_name_;
};

int64_t Since(const std::function<int64_t()>& now_ms, int64_t t0) { return now_ms() - t0; }

}  // namespace

std::string_view CudaProcessStateName(CudaProcessState state) {
  switch (state) {
    case CudaProcessState::kRunning:
      return "running";
    case CudaProcessState::kLocked:
      return "locked";
    case CudaProcessState::kCheckpointed:
      return "checkpointed";
    case CudaProcessState::kFailed:
      return "failed";
    case CudaProcessState::kUnknown:
      break;
  }
  return "unknown";
}

Result<std::unique_ptr<CheckpointDriver>> LoadCheckpointDriver(const std::string& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return Unavailable("cannot load " + path + " (no NVIDIA driver?): " + (why ? why : "?"));
  }
  auto sym = [&](const char* name) { return ::dlsym(handle, name); };
  auto init = reinterpret_cast<InitFn>(sym("cuInit"));
  auto lock = reinterpret_cast<ArgsFn>(sym("cuCheckpointProcessLock"));
  auto checkpoint = reinterpret_cast<ArgsFn>(sym("cuCheckpointProcessCheckpoint"));
  auto restore = reinterpret_cast<ArgsFn>(sym("cuCheckpointProcessRestore"));
  auto unlock = reinterpret_cast<ArgsFn>(sym("cuCheckpointProcessUnlock"));
  auto state = reinterpret_cast<StateFn>(sym("cuCheckpointProcessGetState"));
  auto error_name = reinterpret_cast<ErrorNameFn>(sym("cuGetErrorName"));
  if (init == nullptr) return Unavailable(path + " has no cuInit: not NVIDIA's driver library");
  if (!lock || !checkpoint || !restore || !unlock || !state)
    return Unavailable(path +
                       " has no checkpoint API (cuCheckpointProcess*): the driver is older than "
                       "570");
  // A restore needs cuInit in the caller (or persistence mode).
  if (CUresult r = init(0); r != kCudaSuccess)
    return Unavailable("cuInit failed (" + std::to_string(r) + "): no usable GPU");
  return std::unique_ptr<CheckpointDriver>(
      new DlCheckpointDriver(lock, checkpoint, restore, unlock, state, error_name));
}

CheckpointReport SuspendAll(CheckpointDriver& driver, const std::vector<int>& pids,
                            uint32_t lock_timeout_ms, const std::function<int64_t()>& now_ms) {
  CheckpointReport report;
  for (int pid : pids) {
    ProcessStep step;
    step.pid = pid;
    report.steps.push_back(step);
  }
  size_t locked = 0, checkpointed = 0;
  Status failed = Status::Ok();
  for (; locked < pids.size() && failed.ok(); ++locked) {
    ProcessStep& step = report.steps[locked];
    int64_t t0 = now_ms();
    failed = driver.Lock(step.pid, lock_timeout_ms);
    step.lock_ms = Since(now_ms, t0);
    if (!failed.ok()) {
      step.error = failed.message();
      break;
    }
    step.state = CudaProcessState::kLocked;
  }
  for (; failed.ok() && checkpointed < pids.size(); ++checkpointed) {
    ProcessStep& step = report.steps[checkpointed];
    int64_t t0 = now_ms();
    failed = driver.Checkpoint(step.pid);
    step.checkpoint_ms = Since(now_ms, t0);
    if (!failed.ok()) {
      step.error = failed.message();
      break;
    }
    step.state = CudaProcessState::kCheckpointed;
  }
  if (failed.ok()) {
    report.ok = true;
    return report;
  }
  report.error = failed.message();
  // Undone, last first (each restored when checkpointed, then unlocked): the whole job or nothing.
  auto undo = [&](ProcessStep& step, Status (CheckpointDriver::*call)(int), int64_t* ms,
                  CudaProcessState to) {
    int64_t t0 = now_ms();
    Status s = (driver.*call)(step.pid);
    *ms = Since(now_ms, t0);
    if (s.ok()) {
      step.state = to;
    } else {
      step.error = "undoing: " + s.message();
    }
  };
  for (size_t i = locked; i-- > 0;) {
    ProcessStep& step = report.steps[i];
    if (i < checkpointed)
      undo(step, &CheckpointDriver::Restore, &step.restore_ms, CudaProcessState::kLocked);
    if (step.state == CudaProcessState::kLocked)
      undo(step, &CheckpointDriver::Unlock, &step.unlock_ms, CudaProcessState::kRunning);
  }
  // The process whose call failed was left as it was (a lock that failed: running).
  for (ProcessStep& step : report.steps)
    if (step.state == CudaProcessState::kUnknown) {
      auto state = driver.State(step.pid);
      if (state.ok()) step.state = *state;
    }
  return report;
}

std::vector<int> CudaProcesses(CheckpointDriver& driver, const std::vector<int>& pids) {
  std::vector<int> cuda;
  for (int pid : pids)
    if (driver.State(pid).ok()) cuda.push_back(pid);
  return cuda;
}

CheckpointReport ResumeAll(CheckpointDriver& driver, const std::vector<int>& pids,
                           const std::function<int64_t()>& now_ms) {
  CheckpointReport report;
  report.ok = true;
  for (int pid : pids) {
    ProcessStep step;
    step.pid = pid;
    Result<CudaProcessState> was = driver.State(pid);
    Status s = was.ok() ? Status::Ok() : was.status();
    step.state = was.ok() ? *was : CudaProcessState::kUnknown;
    if (s.ok() && step.state == CudaProcessState::kCheckpointed) {
      int64_t t0 = now_ms();
      s = driver.Restore(pid);
      step.restore_ms = Since(now_ms, t0);
      if (s.ok()) step.state = CudaProcessState::kLocked;
    }
    if (s.ok() && step.state == CudaProcessState::kLocked) {
      int64_t t0 = now_ms();
      s = driver.Unlock(pid);
      step.unlock_ms = Since(now_ms, t0);
      if (s.ok()) step.state = CudaProcessState::kRunning;
    }
    if (s.ok() && step.state != CudaProcessState::kRunning)
      s = FailedPrecondition("process " + std::to_string(pid) + " is " +
                             std::string(CudaProcessStateName(step.state)) + ": not resumable");
    if (!s.ok()) {
      step.error = s.message();
      if (report.ok) report.error = s.message();
      report.ok = false;
      auto state = driver.State(pid);
      step.state = state.ok() ? *state : CudaProcessState::kUnknown;
    }
    report.steps.push_back(std::move(step));
  }
  return report;
}

std::string ReportJson(const CheckpointReport& report) {
  nlohmann::json processes = nlohmann::json::array();
  for (const ProcessStep& step : report.steps)
    processes.push_back({{"pid", step.pid},
                         {"state", CudaProcessStateName(step.state)},
                         {"lock_ms", step.lock_ms},
                         {"checkpoint_ms", step.checkpoint_ms},
                         {"restore_ms", step.restore_ms},
                         {"unlock_ms", step.unlock_ms},
                         {"error", step.error}});
  nlohmann::json out = {{"ok", report.ok}, {"error", report.error}, {"processes", processes}};
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace pinpoint::gpu
