#include "cli/top.h"

#include <poll.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>

#include <fmt/format.h>

#include "cli/format.h"
#include "common/clock.h"
#include "common/terminal.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/client.h"
#include "pinpoint/escape.h"
#include "pinpoint/units.h"

namespace pinpoint::cli {

std::string Bar(double used, double total, int width) {
  int filled = total > 0 ? static_cast<int>(std::lround(std::clamp(used / total, 0.0, 1.0) * width)) : 0;
  return "[" + std::string(static_cast<size_t>(filled), '#') + std::string(static_cast<size_t>(width - filled), '.') + "]";
}

std::string FormatTop(const GpusReply& reply, int64_t now_ms) {
  std::string out;
  std::time_t t = static_cast<std::time_t>(now_ms / 1000);
  char when[32] = "";
  std::tm local{};
  if (::localtime_r(&t, &local) != nullptr) std::strftime(when, sizeof(when), "%H:%M:%S", &local);
  out += fmt::format("pinpoint top  {}  {}{}\n", when, EscapeForTerminal(reply.backend),
                     reply.simulated ? " (SIMULATED: no real GPU)" : "");
  const HostView& host = reply.host;
  out += fmt::format("host: {}/{} CPUs, {}/{} memory allocated\n\n", host.cpus_allocated, host.cpus,
                     FormatSize(host.mem_allocated_bytes), FormatSize(host.mem_bytes));
  for (const auto& d : reply.devices) {
    std::string mps = d.mps_user ? " mps:" + EscapeForTerminal(*d.mps_user) : "";
    std::string state = d.drained ? " DRAINED" : (d.recovering ? " RECOVERING" : "");
    out += fmt::format("dev {} (GPU {}) {} [{}{}{}]\n", d.index, d.gpu_index, EscapeForTerminal(d.name),
                       SharingModeName(d.mode), mps, state);
    uint64_t total = d.mem_bytes;
    if (d.reading) {
      const GpuReadingView& r = *d.reading;
      out += fmt::format("  used  {} {:>9} / {:<9} util {:>4}  power {:>6.1f} W\n",
                         Bar(double(r.mem_used_bytes), double(total), 30), FormatSize(r.mem_used_bytes),
                         FormatSize(total), r.utilization_pct >= 0 ? std::to_string(r.utilization_pct) + "%" : "-",
                         static_cast<double>(r.power_mw) / 1000.0);
    }
    out += fmt::format("  slices {} {:>9} allocated, {}% share free\n", Bar(double(d.mem_allocated_bytes), double(total), 30),
                       FormatSize(d.mem_allocated_bytes), d.share_free_pct);
    if (d.jobs.empty()) {
      out += "  (no jobs)\n";
      continue;
    }
    out += fmt::format("  {:>7} {:<10} {:<16} {:>9} {:>9} {:>14} {:>6} {:>10}\n", "JOB", "USER", "NAME", "USED", "SLICE", "", "SHARE", "ENERGY");
    for (const auto& j : d.jobs) {
      uint64_t slice = j.gpu_mem_bytes;
      bool seen = j.gpu_mem_used_bytes.has_value();
      uint64_t used = j.gpu_mem_used_bytes.value_or(0);
      std::string name = EscapeForTerminal(j.name).substr(0, 16);
      out += fmt::format("  {:>7} {:<10} {:<16} {:>9} {:>9} {:>14} {:>6} {:>8.1f}kJ\n", j.id,
                         EscapeForTerminal(j.user).substr(0, 10), name.empty() ? "-" : name,
                         seen ? FormatSize(used) : "-", slice ? FormatSize(slice) : "whole",
                         slice && seen ? Bar(double(used), double(slice), 12) : "",
                         j.gpu_share_pct ? std::to_string(j.gpu_share_pct) + "%" : "-",
                         static_cast<double>(j.energy_mj) / 1e6);
    }
  }
  return out;
}

namespace {

volatile sig_atomic_t g_top_signal = 0;
void NoteTopSignal(int signal) { g_top_signal = signal; }

// While it lives: a terminal on `fd` hands over each key as typed, without echo, and SIGINT and
// SIGTERM interrupt the wait between frames instead of killing pinpoint with the terminal so.
class KeyInput {
 public:
  explicit KeyInput(int fd) : fd_(fd) {
    g_top_signal = 0;
    struct sigaction note {};
    note.sa_handler = NoteTopSignal;  // no SA_RESTART: poll returns EINTR
    ::sigaction(SIGINT, &note, &old_int_);
    ::sigaction(SIGTERM, &note, &old_term_);
    if (fd_ < 0 || ::tcgetattr(fd_, &saved_) != 0) return;
    termios raw = saved_;
    raw.c_lflag &= static_cast<tcflag_t>(~(ICANON | ECHO));
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    terminal_ = ::tcsetattr(fd_, TCSANOW, &raw) == 0;
  }
  ~KeyInput() {
    if (terminal_) ::tcsetattr(fd_, TCSANOW, &saved_);
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }
  KeyInput(const KeyInput&) = delete;
  KeyInput& operator=(const KeyInput&) = delete;

  // Waits up to `ms` (the refresh interval) for a key. True when `q` came.
  bool QuitWithin(int ms) {
    pollfd p{fd_, POLLIN, 0};
    int ready = ::poll(&p, fd_ >= 0 ? 1 : 0, ms);
    if (ready <= 0 || (p.revents & POLLIN) == 0) return false;
    char keys[64];
    ssize_t n = ::read(fd_, keys, sizeof(keys));
    if (n <= 0) {
      fd_ = -1;  // end of input: no more keys, frames go on
      return false;
    }
    for (ssize_t i = 0; i < n; ++i)
      if (keys[i] == 'q' || keys[i] == 'Q') return true;
    return false;
  }

 private:
  int fd_;
  termios saved_{};
  bool terminal_ = false;
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace

Result<int> RunTop(const std::string& socket, bool json_output, const TopArgs& a, std::ostream& out, int keys) {
  auto client = Client::Connect(socket);
  if (!client.ok()) return client.status();
  bool in_place = a.count != 1 && StyleForFd(STDOUT_FILENO).redraw;  // plain frames in a pipe or log
  KeyInput input(keys);
  for (int frame = 0; a.count == 0 || frame < a.count; ++frame) {
    // The wait is the refresh rate (and a key or a signal ends it), not synchronisation.
    if (frame > 0 && input.QuitWithin(static_cast<int>(a.interval_s * 1000))) return 0;
    if (g_top_signal != 0) return 128 + g_top_signal;
    auto reply = client->Gpus();
    if (!reply.ok()) return reply.status();
    if (json_output) {
      out << ToJson(*reply).dump() << "\n";
    } else {
      out << (in_place ? "\x1b[H\x1b[2J" : (frame > 0 ? "\n" : "")) << FormatTop(*reply, RealClock().NowMs());
    }
    out.flush();
  }
  return 0;
}

}  // namespace pinpoint::cli
