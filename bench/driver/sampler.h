// GPU readings during a benchmark: energy, power, utilisation and memory of the GPUs measured
// (one or several, read together), sampled on a thread of its own through a GpuBackend (NVML on a
// real node), and summarised per measurement.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpu/gpu_backend.h"
#include "pinpoint/status.h"

namespace pinpoint::bench {

// One reading of the GPUs measured: energy, power and memory summed over them, utilisation their
// mean.
struct GpuReading {
  double t_s = 0;            // NowSeconds() when read
  uint64_t energy_mj = 0;    // total energy counter; 0 when unsupported (by any of the GPUs)
  uint32_t power_mw = 0;     // 0 when unsupported (by any of the GPUs)
  int utilization_pct = -1;  // -1 when unsupported (by any of the GPUs)
  uint64_t mem_used_bytes = 0;
};

// The GPUs' samples as one reading (t_s left 0): a value that one GPU cannot give is unknown for
// all, so that a sum never silently leaves a GPU out.
GpuReading CombineSamples(const std::vector<gpu::GpuSample>& samples);

// What the GPU did between two marks. Values below 0 are unknown.
struct WindowStats {
  double seconds = 0;           // between the two marks
  double energy_j = -1;         // from the energy counter, else power integrated over the samples
  std::string energy_source;    // "counter", "power" or "" (unknown)
  double mean_power_w = -1;     // energy_j / seconds
  double utilization_pct = -1;  // mean of the samples inside the window
  uint64_t peak_mem_bytes = 0;
  int samples = 0;  // readings inside the window, marks included
};

// Summarises the readings (ascending t_s) from t0_s to t1_s, both ends included. The energy
// counter is used when it has a reading at or before t0_s and one at or after t1_s and did not go
// backwards; otherwise the power readings are integrated (trapezoids), when there are two or more.
WindowStats SummarizeWindow(const std::vector<GpuReading>& readings, double t0_s, double t1_s);

// Marks the edges of a measurement and summarises what happened between them. An interface, so
// the campaign runs in tests without a GPU.
class EnergyMeter {
 public:
  virtual ~EnergyMeter() = default;
  // Takes a reading now and returns its time: the edge of a window.
  virtual double Mark() = 0;
  virtual WindowStats Window(double t0_s, double t1_s) = 0;
};

// Samples GPUs `indices` of `backend` together every period_ms on its own thread, from Start() to
// Stop() (or destruction). The backend must outlive it and is used by this object only.
// Thread-safe.
class GpuSampler : public EnergyMeter {
 public:
  GpuSampler(gpu::GpuBackend* backend, std::vector<int> indices, int period_ms);
  ~GpuSampler() override;
  GpuSampler(const GpuSampler&) = delete;
  GpuSampler& operator=(const GpuSampler&) = delete;

  // Takes the first reading and starts the thread. Errors: the backend's, from that reading.
  Status Start();
  void Stop();

  double Mark() override;
  WindowStats Window(double t0_s, double t1_s) override;
  std::vector<GpuReading> Readings() const;
  // The last error a reading returned ("" if none): readings that fail are skipped.
  std::string LastError() const;

 private:
  Result<double> ReadOnce();  // takes mu_; returns the reading's time
  void Loop();

  gpu::GpuBackend* backend_;
  std::vector<int> indices_;
  int period_ms_;
  mutable std::mutex mu_;
  std::vector<GpuReading> readings_;
  std::string last_error_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace pinpoint::bench
