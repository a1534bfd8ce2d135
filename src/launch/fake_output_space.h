// FakeOutputSpace: an OutputSpace for tests. Each job directory occupies what the test says, the
// disk is as full as the test says, and a cut gives back what it frees, as the real disk would.
// State is per instance; what was asked is recorded.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "launch/output_space.h"

namespace pinpoint::launch {

class FakeOutputSpace : public OutputSpace {
 public:
  struct CutDone {
    std::string job_dir;
    uint64_t keep_bytes = 0;
    std::string note;
  };

  Result<uint64_t> OutputBytes(const std::string& job_dir) override {
    ++looks_;
    auto it = bytes_.find(job_dir);
    if (it == bytes_.end()) return NotFound(job_dir + " does not exist");
    return it->second;
  }
  Result<DiskSpace> Space() override { return space_; }
  Status Cut(const std::string& job_dir, uint64_t keep_bytes, const std::string& note) override {
    cuts_.push_back({job_dir, keep_bytes, note});
    auto it = bytes_.find(job_dir);
    if (it == bytes_.end()) return NotFound(job_dir + " does not exist");
    uint64_t freed = it->second - std::min(it->second, keep_bytes);
    it->second -= freed;
    space_.free_bytes += freed;
    return Status::Ok();
  }
  // At once, as OutputSpace's, unless DeferCuts: then held until FinishCuts (a cut being made off
  // the loop while passes go on).
  void CutLater(const std::string& job_dir, uint64_t keep_bytes, const std::string& note,
                std::function<void(const Status&)> done) override {
    if (!defer_cuts_) return OutputSpace::CutLater(job_dir, keep_bytes, note, std::move(done));
    deferred_.push_back([this, job_dir, keep_bytes, note, done = std::move(done)] {
      done(Cut(job_dir, keep_bytes, note));
    });
  }
  void DeferCuts() { defer_cuts_ = true; }
  void FinishCuts() {
    for (auto& cut : std::exchange(deferred_, {})) cut();
  }

  // Test controls: the job directory `job_dir` now occupies `bytes` (the disk's free space
  // changes by as much); the disk's size and free space.
  void Write(const std::string& job_dir, uint64_t bytes) {
    uint64_t& held = bytes_[job_dir];
    space_.free_bytes += held;
    space_.free_bytes -= std::min(space_.free_bytes, bytes);
    held = bytes;
  }
  void SetSpace(DiskSpace space) { space_ = space; }

  // Records.
  const std::vector<CutDone>& cuts() const { return cuts_; }
  uint64_t BytesOf(const std::string& job_dir) const {
    auto it = bytes_.find(job_dir);
    return it == bytes_.end() ? 0 : it->second;
  }
  DiskSpace space() const { return space_; }
  int looks() const { return looks_; }

 private:
  std::map<std::string, uint64_t> bytes_;
  DiskSpace space_{uint64_t{1} << 40, uint64_t{1} << 40};
  std::vector<CutDone> cuts_;
  int looks_ = 0;
  bool defer_cuts_ = false;
  std::vector<std::function<void()>> deferred_;
};

}  // namespace pinpoint::launch
