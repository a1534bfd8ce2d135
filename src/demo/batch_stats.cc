#include "demo/batch_stats.h"

#include <algorithm>
#include <utility>

namespace pinpoint::demo {

namespace {

// (start_ms, end_ms) of the jobs on each device.
std::map<int, std::vector<std::pair<int64_t, int64_t>>> IntervalsPerDevice(
    const std::vector<JobView>& jobs) {
  std::map<int, std::vector<std::pair<int64_t, int64_t>>> intervals;
  for (const auto& j : jobs) {
    if (j.start_ms <= 0 || j.end_ms < j.start_ms) continue;
    for (const auto& a : j.allocations) intervals[a.device_index].push_back({j.start_ms, j.end_ms});
  }
  return intervals;
}

}  // namespace

std::map<int, int> PeakPerDevice(const std::vector<JobView>& jobs) {
  std::map<int, int> peak;
  for (auto& [dev, spans] : IntervalsPerDevice(jobs)) {
    std::vector<std::pair<int64_t, int>> edges;
    for (const auto& [start, end] : spans) {
      edges.push_back({start, +1});
      edges.push_back({end, -1});
    }
    std::sort(edges.begin(), edges.end());  // an end at the same ms as a start comes first
    int now = 0;
    for (const auto& [t, delta] : edges) peak[dev] = std::max(peak[dev], now += delta);
  }
  return peak;
}

double BusyGpuSeconds(const std::vector<JobView>& jobs) {
  int64_t busy_ms = 0;
  for (auto& [dev, spans] : IntervalsPerDevice(jobs)) {
    std::sort(spans.begin(), spans.end());
    int64_t cur_start = spans.front().first, cur_end = spans.front().second;
    for (const auto& [start, end] : spans) {
      if (start > cur_end) {
        busy_ms += cur_end - cur_start;
        cur_start = start;
      }
      cur_end = std::max(cur_end, end);
    }
    busy_ms += cur_end - cur_start;
  }
  return static_cast<double>(busy_ms) / 1000.0;
}

}  // namespace pinpoint::demo
