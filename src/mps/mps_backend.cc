#include "mps/mps_backend.h"

namespace pinpoint::mps {

namespace {

ClientSlice ClientOf(const sharing::Slice& s) {
  return ClientSlice{s.device_index, s.device_uuid, s.uid, s.gid, s.gpu_mem_bytes, s.gpu_share_pct};
}

sharing::Event::Kind KindOf(MpsEvent::Kind kind) {
  switch (kind) {
    case MpsEvent::Kind::kFatalFault:
      return sharing::Event::Kind::kFault;
    case MpsEvent::Kind::kDaemonDied:
      return sharing::Event::Kind::kServerDied;
    case MpsEvent::Kind::kDaemonQuit:
      return sharing::Event::Kind::kServerQuit;
    case MpsEvent::Kind::kDaemonUnresponsive:
      return sharing::Event::Kind::kServerUnresponsive;
    case MpsEvent::Kind::kDaemonReady:
      return sharing::Event::Kind::kServerReady;
    case MpsEvent::Kind::kDaemonStartFailed:
      return sharing::Event::Kind::kServerStartFailed;
  }
  return sharing::Event::Kind::kServerDied;
}

}  // namespace

SharingMode MpsBackend::HoldsAs(uint64_t slot_gpu_mem_bytes, size_t devices) const {
  if (slot_gpu_mem_bytes == 0) return SharingMode::kExclusive;
  return devices > 1 ? SharingMode::kTimeslice : SharingMode::kMps;
}

std::vector<std::string> MpsBackend::OwnVariables() const {
  return {"CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT",
          "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"};
}

Result<std::map<std::string, std::string>> MpsBackend::Prepare(const sharing::Slice& slice) {
  return control_->PrepareClient(ClientOf(slice));
}

void MpsBackend::Adopt(const sharing::Slice& slice) { control_->AdoptClient(ClientOf(slice)); }

void MpsBackend::Release(const sharing::Slice& slice) { control_->ReleaseClient(ClientOf(slice)); }

Status MpsBackend::StopClients(const sharing::Slice& slice,
                               const std::function<std::vector<int64_t>()>& pids) {
  return control_->TerminateClients(ClientOf(slice), pids(), slice.job_id);
}

bool MpsBackend::Stopping(uint64_t job_id) const { return control_->Terminating(job_id); }

std::vector<sharing::Event> MpsBackend::Poll(int64_t now_ms) {
  std::vector<sharing::Event> out;
  for (MpsEvent& e : control_->Poll(now_ms)) {
    out.push_back(sharing::Event{SharingMode::kMps, e.device_index, KindOf(e.kind), e.uid,
                                 std::move(e.detail)});
  }
  return out;
}

std::vector<int> MpsBackend::WaitFds() const { return control_->WaitFds(); }

void MpsBackend::ResetDevice(int device_index) { control_->ResetDevice(device_index); }

std::map<int, sharing::ServerInfo> MpsBackend::Servers() const {
  std::map<int, sharing::ServerInfo> out;
  for (const MpsDaemonInfo& d : control_->Describe()) {
    out[d.device_index] = sharing::ServerInfo{d.device_index, d.running,  d.uid,     d.control_pid,
                                              d.clients,      d.restarts, d.pipe_dir};
  }
  return out;
}

}  // namespace pinpoint::mps
