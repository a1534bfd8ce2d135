// A sharing backend for tests: a mode's behaviour scripted and recorded, so the node's use of the
// seam can be checked without MPS (and a new mode's fit tried without writing one).
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sharing/backend.h"

namespace pinpoint::sharing {

class FakeBackend : public Backend {
 public:
  FakeBackend(SharingMode mode, PlacementRules rules) : mode_(mode), rules_(std::move(rules)) {}

  SharingMode mode() const override { return mode_; }
  PlacementRules Rules() const override { return rules_; }
  std::vector<std::string> OwnVariables() const override { return {"FAKE_LIMIT_BYTES"}; }
  Result<std::map<std::string, std::string>> Prepare(const Slice& slice) override {
    prepared_.push_back(slice);
    if (!failure_.ok()) return failure_;
    return std::map<std::string, std::string>{
        {"FAKE_LIMIT_BYTES", std::to_string(slice.gpu_mem_bytes)}};
  }
  void Adopt(const Slice& slice) override { adopted_.push_back(slice); }
  void Release(const Slice& slice) override { released_.push_back(slice); }
  Status StopClients(const Slice& slice,
                     const std::function<std::vector<int64_t>()>& pids) override {
    stopped_.emplace_back(slice, pids());
    if (hold_stops_) stopping_.insert(slice.job_id);
    return Status::Ok();
  }
  bool Stopping(uint64_t job_id) const override { return stopping_.count(job_id) > 0; }
  std::vector<Event> Poll(int64_t) override {
    std::vector<Event> out;
    out.swap(events_);
    return out;
  }
  void ResetDevice(int device_index) override { resets_.push_back(device_index); }
  std::map<int, ServerInfo> Servers() const override { return servers_; }

  // Scripting.
  void Fail(Status status) { failure_ = std::move(status); }
  void HoldStops(bool hold) { hold_stops_ = hold; }
  void FinishStops() { stopping_.clear(); }
  void Inject(Event e) { events_.push_back(std::move(e)); }
  void SetServers(std::map<int, ServerInfo> servers) { servers_ = std::move(servers); }

  // What was asked.
  const std::vector<Slice>& prepared() const { return prepared_; }
  const std::vector<Slice>& adopted() const { return adopted_; }
  const std::vector<Slice>& released() const { return released_; }
  const std::vector<std::pair<Slice, std::vector<int64_t>>>& stopped() const { return stopped_; }
  const std::vector<int>& resets() const { return resets_; }

 private:
  SharingMode mode_;
  PlacementRules rules_;
  Status failure_ = Status::Ok();
  bool hold_stops_ = false;
  std::set<uint64_t> stopping_;
  std::vector<Event> events_;
  std::map<int, ServerInfo> servers_;
  std::vector<Slice> prepared_, adopted_, released_;
  std::vector<std::pair<Slice, std::vector<int64_t>>> stopped_;
  std::vector<int> resets_;
};

}  // namespace pinpoint::sharing
