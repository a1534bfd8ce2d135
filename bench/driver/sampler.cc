#include "bench/driver/sampler.h"

#include <chrono>
#include <utility>

#include "bench/driver/proc.h"

namespace pinpoint::bench {

WindowStats SummarizeWindow(const std::vector<GpuReading>& readings, double t0_s, double t1_s) {
  WindowStats w;
  w.seconds = t1_s - t0_s;
  const GpuReading* before = nullptr;  // last reading at or before t0
  const GpuReading* after = nullptr;   // first reading at or after t1, not earlier than `before`
  double util_sum = 0, power_j = 0;
  int util_n = 0, power_n = 0;
  const GpuReading* prev_in = nullptr;
  for (const GpuReading& r : readings) {
    if (r.t_s <= t0_s) {
      before = &r;
      after = nullptr;  // readings taken in the same instant: the window starts at the last
    }
    if (r.t_s >= t1_s && after == nullptr) after = &r;
    if (r.t_s < t0_s || r.t_s > t1_s) continue;
    ++w.samples;
    if (r.utilization_pct >= 0) {
      util_sum += r.utilization_pct;
      ++util_n;
    }
    if (r.mem_used_bytes > w.peak_mem_bytes) w.peak_mem_bytes = r.mem_used_bytes;
    if (r.power_mw > 0) {
      if (prev_in != nullptr)
        power_j += (r.t_s - prev_in->t_s) * (r.power_mw + prev_in->power_mw) / 2000.0;
      prev_in = &r;
      ++power_n;
    }
  }
  if (util_n > 0) w.utilization_pct = util_sum / util_n;
  if (before != nullptr && after != nullptr && before->energy_mj > 0 &&
      after->energy_mj >= before->energy_mj) {
    w.energy_j = static_cast<double>(after->energy_mj - before->energy_mj) / 1000.0;
    w.energy_source = "counter";
  } else if (power_n >= 2) {
    w.energy_j = power_j;
    w.energy_source = "power";
  }
  if (w.energy_j >= 0 && w.seconds > 0) w.mean_power_w = w.energy_j / w.seconds;
  return w;
}

GpuReading CombineSamples(const std::vector<gpu::GpuSample>& samples) {
  GpuReading r;
  if (samples.empty()) return r;
  bool energy = true, power = true, utilization = true;
  int util_sum = 0;
  for (const gpu::GpuSample& s : samples) {
    energy = energy && s.energy_mj > 0;
    power = power && s.power_mw > 0;
    utilization = utilization && s.utilization_pct >= 0;
    r.energy_mj += s.energy_mj;
    r.power_mw += s.power_mw;
    util_sum += s.utilization_pct;
    r.mem_used_bytes += s.mem_used_bytes;
  }
  if (!energy) r.energy_mj = 0;
  if (!power) r.power_mw = 0;
  r.utilization_pct = utilization ? util_sum / static_cast<int>(samples.size()) : -1;
  return r;
}

GpuSampler::GpuSampler(gpu::GpuBackend* backend, std::vector<int> indices, int period_ms)
    : backend_(backend), indices_(std::move(indices)), period_ms_(period_ms) {}

GpuSampler::~GpuSampler() { Stop(); }

Result<double> GpuSampler::ReadOnce() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<gpu::GpuSample> samples;
  for (int index : indices_) {
    Result<gpu::GpuSample> s = backend_->Sample(index);
    if (!s.ok()) {
      last_error_ = s.status().message();
      return s.status();
    }
    samples.push_back(std::move(*s));
  }
  GpuReading r = CombineSamples(samples);
  r.t_s = NowSeconds();
  readings_.push_back(r);
  return r.t_s;
}

Status GpuSampler::Start() {
  Result<double> first = ReadOnce();
  if (!first.ok()) return first.status();
  stop_ = false;
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void GpuSampler::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void GpuSampler::Loop() {
  auto next = std::chrono::steady_clock::now();
  while (!stop_) {
    next += std::chrono::milliseconds(period_ms_);
    // Sleep in short steps so Stop() is quick whatever the period.
    while (!stop_ && std::chrono::steady_clock::now() < next) {
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          next - std::chrono::steady_clock::now(), std::chrono::milliseconds(20)));
    }
    if (!stop_) (void)ReadOnce();
  }
}

double GpuSampler::Mark() {
  Result<double> t = ReadOnce();
  return t.ok() ? *t : NowSeconds();
}

WindowStats GpuSampler::Window(double t0_s, double t1_s) {
  std::lock_guard<std::mutex> lock(mu_);
  return SummarizeWindow(readings_, t0_s, t1_s);
}

std::vector<GpuReading> GpuSampler::Readings() const {
  std::lock_guard<std::mutex> lock(mu_);
  return readings_;
}

std::string GpuSampler::LastError() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

}  // namespace pinpoint::bench
