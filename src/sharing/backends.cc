#include "sharing/backends.h"

namespace pinpoint::sharing {

namespace {

// A mode no backend was registered for: nothing may run on its devices but whole-device jobs.
class RefusingBackend : public Backend {
 public:
  explicit RefusingBackend(SharingMode mode) : mode_(mode) {}
  SharingMode mode() const override { return mode_; }
  PlacementRules Rules() const override {
    return PlacementRules{.max_jobs = 0, .no_slices_reason = Why()};
  }
  Result<std::map<std::string, std::string>> Prepare(const Slice& slice) override {
    if (slice.gpu_mem_bytes == 0) return std::map<std::string, std::string>{};
    return Unavailable(Why());
  }
  void Adopt(const Slice&) override {}
  void Release(const Slice&) override {}

 private:
  std::string Why() const {
    return std::string("pinpointd runs no ") + SharingModeName(mode_) + " backend";
  }
  SharingMode mode_;
};

}  // namespace

void Backends::Add(std::unique_ptr<Backend> backend) {
  Use(backend.get());
  owned_.push_back(std::move(backend));
}

void Backends::Use(Backend* backend) { backends_[backend->mode()] = backend; }

Backend& Backends::For(SharingMode mode) const {
  auto it = backends_.find(mode);
  if (it != backends_.end()) return *it->second;
  std::unique_ptr<Backend>& stand_in = refusing_[mode];
  if (!stand_in) stand_in = std::make_unique<RefusingBackend>(mode);
  return *stand_in;
}

std::vector<Event> Backends::Poll(int64_t now_ms) {
  std::vector<Event> out;
  for (auto& [mode, backend] : backends_) {
    for (Event& e : backend->Poll(now_ms)) {
      e.mode = mode;
      out.push_back(std::move(e));
    }
  }
  return out;
}

std::vector<int> Backends::WaitFds() const {
  std::vector<int> out;
  for (const auto& [mode, backend] : backends_) {
    for (int fd : backend->WaitFds()) out.push_back(fd);
  }
  return out;
}

std::vector<std::string> Backends::OwnVariables() const {
  std::vector<std::string> out;
  for (const auto& [mode, backend] : backends_) {
    for (std::string& name : backend->OwnVariables()) out.push_back(std::move(name));
  }
  return out;
}

bool Backends::Stopping(uint64_t job_id) const {
  for (const auto& [mode, backend] : backends_) {
    if (backend->Stopping(job_id)) return true;
  }
  return false;
}

void Backends::ResetDevice(int device_index) {
  for (auto& [mode, backend] : backends_) backend->ResetDevice(device_index);
}

std::map<int, ServerInfo> Backends::Servers() const {
  std::map<int, ServerInfo> out;
  for (const auto& [mode, backend] : backends_) out.merge(backend->Servers());
  return out;
}

}  // namespace pinpoint::sharing
