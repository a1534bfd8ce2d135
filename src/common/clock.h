// The clock, behind an interface so tests control time.
#pragma once

#include <chrono>
#include <cstdint>

namespace pinpoint {

class Clock {
 public:
  virtual ~Clock() = default;
  // Unix epoch milliseconds.
  virtual int64_t NowMs() = 0;
};

class RealClock : public Clock {
 public:
  int64_t NowMs() override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

// Starts at `start_ms` and moves only when told. Per instance.
class FakeClock : public Clock {
 public:
  explicit FakeClock(int64_t start_ms = 1'700'000'000'000) : now_ms_(start_ms) {}
  int64_t NowMs() override { return now_ms_; }
  void AdvanceMs(int64_t ms) { now_ms_ += ms; }

 private:
  int64_t now_ms_;
};

}  // namespace pinpoint
