// FakeMps: an MpsControl for tests. Records every call; scripted faults (PrepareClient failure,
// a fatal client fault or a daemon crash reported by the next Poll). State is per instance.
#pragma once

#include <unistd.h>

#include <set>
#include <vector>

#include "mps/mps_control.h"

namespace pinpoint::mps {

class FakeMps : public MpsControl {
 public:
  Result<std::map<std::string, std::string>> PrepareClient(const ClientSlice& slice) override {
    prepared_.push_back(slice);
    if (!failure_.ok()) return failure_;
    return std::map<std::string, std::string>{
        {"CUDA_MPS_PIPE_DIRECTORY", "/fake/mps/" + slice.device_uuid + "/pipe"},
        {"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", PinnedMemLimitValue(slice.gpu_mem_bytes)}};
  }
  void ReleaseClient(const ClientSlice& slice) override { released_.push_back(slice); }
  Status TerminateClients(const ClientSlice& slice, const std::vector<int64_t>& pids, uint64_t key) override {
    terminated_.push_back({slice, pids});
    if (hold_terminations_) terminating_.insert(key);
    return Status::Ok();
  }
  bool Terminating(uint64_t key) const override { return terminating_.count(key) > 0; }
  std::vector<MpsEvent> Poll(int64_t) override {
    std::vector<MpsEvent> out;
    out.swap(pending_events_);
    return out;
  }
  void ResetDevice(int device_index) override { resets_.push_back(device_index); }
  std::vector<MpsDaemonInfo> Describe() const override { return daemons_; }

  // Scripting.
  void Fail(Status status) { failure_ = std::move(status); }
  // Safe cancels stay in flight (Terminating) until FinishTerminations: a server slow to answer.
  void HoldTerminations(bool hold) { hold_terminations_ = hold; }
  void FinishTerminations() { terminating_.clear(); }
  // A fatal-fault claim from the MPS daemon of user `uid` (by default the test's own user).
  void InjectFault(int device_index, uint32_t uid = ::getuid()) {
    pending_events_.push_back({device_index, MpsEvent::Kind::kFatalFault, "scripted fatal GPU error", uid});
  }
  // What Describe reports from now on (none by default).
  void SetDaemons(std::vector<MpsDaemonInfo> daemons) { daemons_ = std::move(daemons); }
  // The control daemon of `uid` on the device stopped answering and was killed.
  void InjectUnresponsive(int device_index, uint32_t uid = ::getuid()) {
    pending_events_.push_back({device_index, MpsEvent::Kind::kDaemonUnresponsive, "scripted: did not answer", uid});
  }
  void InjectDaemonDeath(int device_index) {
    pending_events_.push_back({device_index, MpsEvent::Kind::kDaemonDied, "scripted crash"});
  }

  // Records.
  const std::vector<ClientSlice>& prepared() const { return prepared_; }
  const std::vector<ClientSlice>& released() const { return released_; }
  const std::vector<std::pair<ClientSlice, std::vector<int64_t>>>& terminated() const { return terminated_; }
  const std::vector<int>& resets() const { return resets_; }

 private:
  std::vector<ClientSlice> prepared_;
  std::vector<ClientSlice> released_;
  std::vector<std::pair<ClientSlice, std::vector<int64_t>>> terminated_;
  std::vector<int> resets_;
  std::vector<MpsEvent> pending_events_;
  std::vector<MpsDaemonInfo> daemons_;
  Status failure_;
  bool hold_terminations_ = false;
  std::set<uint64_t> terminating_;
};

}  // namespace pinpoint::mps
