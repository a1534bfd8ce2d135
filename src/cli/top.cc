#include "cli/top.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "cli/format.h"
#include "common/clock.h"
#include "common/terminal.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/client.h"
#include "pinpoint/escape.h"
#include "pinpoint/units.h"

namespace pinpoint::cli {

std::string Bar(double used, double total, int width) {
  int filled =
      total > 0 ? static_cast<int>(std::lround(std::clamp(used / total, 0.0, 1.0) * width)) : 0;
  return "[" + std::string(static_cast<size_t>(filled), '#') +
         std::string(static_cast<size_t>(width - filled), '.') + "]";
}

namespace {

// `line` cut to `cols` bytes, never inside a UTF-8 character (a name may hold one).
std::string Cut(const std::string& line, int cols) {
  if (cols <= 0 || line.size() <= static_cast<size_t>(cols)) return line;
  size_t end = static_cast<size_t>(cols);
  while (end > 0 && (static_cast<unsigned char>(line[end]) & 0xC0) == 0x80) --end;
  return line.substr(0, end);
}

}  // namespace

namespace {

// The frame's first lines: the time, the node, its host CPUs and memory.
void AddHeader(const GpusReply& reply, int64_t now_ms, std::vector<std::string>& lines) {
  std::time_t t = static_cast<std::time_t>(now_ms / 1000);
  char when[32] = "";
  std::tm local{};
  if (::localtime_r(&t, &local) != nullptr) std::strftime(when, sizeof(when), "%H:%M:%S", &local);
  lines.push_back(fmt::format("pinpoint top  {}  {}{}", when, EscapeForTerminal(reply.backend),
                              reply.simulated ? " (SIMULATED: no real GPU)" : ""));
  const HostView& host = reply.host;
  lines.push_back(fmt::format("host: {}/{} CPUs, {}/{} memory allocated", host.cpus_allocated,
                              host.cpus, FormatSize(host.mem_allocated_bytes),
                              FormatSize(host.mem_bytes)));
  lines.push_back("");
}

// One job's row on its device; a bar of its use of its slice unless the frame is `narrow`.
std::string JobRow(const DeviceJobView& j, bool narrow) {
  uint64_t slice = j.gpu_mem_bytes;
  bool seen = j.gpu_mem_used_bytes.has_value();
  uint64_t used = j.gpu_mem_used_bytes.value_or(0);
  std::string name = EscapeForTerminal(j.name).substr(0, 16);
  std::string mini =
      narrow ? ""
             : fmt::format("{:>14} ", slice && seen ? Bar(double(used), double(slice), 12) : "");
  return fmt::format("  {:>7} {:<10} {:<16} {:>9} {:>9} {}{:>6} {:>8.1f}kJ", j.id,
                     EscapeForTerminal(j.user).substr(0, 10), name.empty() ? "-" : name,
                     seen ? FormatSize(used) : "-", slice ? FormatSize(slice) : "whole", mini,
                     j.gpu_share_pct ? std::to_string(j.gpu_share_pct) + "%" : "-",
                     static_cast<double>(j.energy_mj) / 1e6);
}

// A device's lines: what it is, its memory in use and allocated (bars `bar` wide), its jobs (their
// line indices into `job_rows`).
void AddDevice(const DeviceView& d, int bar, bool narrow, std::vector<std::string>& lines,
               std::vector<std::vector<size_t>>& job_rows) {
  job_rows.emplace_back();
  std::string mps = d.mps_user ? " mps:" + EscapeForTerminal(*d.mps_user) : "";
  std::string state = d.drained ? " DRAINED" : (d.recovering ? " RECOVERING" : "");
  lines.push_back(fmt::format("dev {} (GPU {}) {} [{}{}{}]", d.index, d.gpu_index,
                              EscapeForTerminal(d.name), SharingModeName(d.mode), mps, state));
  uint64_t total = d.mem_bytes;
  if (d.reading) {
    const GpuReadingView& r = *d.reading;
    lines.push_back(fmt::format(
        "  used  {} {:>9} / {:<9} util {:>4}  power {:>6.1f} W",
        Bar(double(r.mem_used_bytes), double(total), bar), FormatSize(r.mem_used_bytes),
        FormatSize(total), r.utilization_pct >= 0 ? std::to_string(r.utilization_pct) + "%" : "-",
        static_cast<double>(r.power_mw) / 1000.0));
  }
  lines.push_back(fmt::format("  slices {} {:>9} allocated, {}% share free",
                              Bar(double(d.mem_allocated_bytes), double(total), bar),
                              FormatSize(d.mem_allocated_bytes), d.share_free_pct));
  if (d.jobs.empty()) {
    lines.push_back("  (no jobs)");
    return;
  }
  lines.push_back(fmt::format("  {:>7} {:<10} {:<16} {:>9} {:>9} {}{:>6} {:>10}", "JOB", "USER",
                              "NAME", "USED", "SLICE", narrow ? "" : std::string(15, ' '), "SHARE",
                              "ENERGY"));
  for (const auto& j : d.jobs) {
    job_rows.back().push_back(lines.size());
    lines.push_back(JobRow(j, narrow));
  }
}

// Too many lines for a window of `rows`: job rows go first, each from the device that shows the
// most of them (its last first), so that every device keeps as many as the others; then whatever
// is below the window. The last line says how many were hidden.
void FitToRows(int rows, std::vector<std::vector<size_t>> job_rows,
               std::vector<std::string>& lines) {
  if (rows <= 0 || lines.size() <= static_cast<size_t>(rows)) return;
  size_t keep = static_cast<size_t>(std::max(rows - 1, 1));
  size_t hidden = 0;
  while (lines.size() - hidden > keep) {
    auto most = job_rows.end();
    for (auto it = job_rows.begin(); it != job_rows.end(); ++it)
      if (!it->empty() && (most == job_rows.end() || it->size() >= most->size())) most = it;
    if (most == job_rows.end()) break;
    lines[most->back()].assign(1, '\0');  // marked: dropped below
    most->pop_back();
    ++hidden;
  }
  std::vector<std::string> kept;
  for (auto& line : lines)
    if (line != std::string(1, '\0')) kept.push_back(std::move(line));
  if (kept.size() > keep) {
    hidden += kept.size() - keep;
    kept.resize(keep);
  }
  kept.push_back(fmt::format("({} more line{} hidden: a larger window, or pinpoint gpus)", hidden,
                             hidden == 1 ? "" : "s"));
  lines = std::move(kept);
}

}  // namespace

std::string FormatTop(const GpusReply& reply, int64_t now_ms, int cols, int rows) {
  std::vector<std::string> lines;
  AddHeader(reply, now_ms, lines);
  // Narrower than the full frame (about 92 columns): shorter bars, then no bar per job, then
  // every line cut at the edge.
  bool narrow = cols > 0 && cols < 92;
  int bar = narrow ? std::clamp(cols - 62, 8, 30) : 30;
  // The indices of each device's job lines: the first cut when rows are short.
  std::vector<std::vector<size_t>> job_rows;
  for (const auto& d : reply.devices) AddDevice(d, bar, narrow, lines, job_rows);
  FitToRows(rows, std::move(job_rows), lines);
  std::string out;
  for (const auto& line : lines) out += Cut(line, cols) + "\n";
  // A frame that fills its window ends without a newline, which would scroll its first line away.
  if (rows > 0 && !out.empty()) out.pop_back();
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

Result<int> RunTop(const std::string& socket, bool json_output, const TopArgs& a, std::ostream& out,
                   int keys) {
  auto client = Client::Connect(socket);
  if (!client.ok()) return client.status();
  bool in_place =
      a.count != 1 && StyleForFd(STDOUT_FILENO).redraw;  // plain frames in a pipe or log
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
      // On a terminal the frame fits its window (read each frame: it may be resized).
      int cols = 0, rows = 0;
      winsize size{};
      if (in_place && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0 &&
          size.ws_row > 0) {
        cols = size.ws_col;
        rows = size.ws_row;
      }
      out << (in_place ? "\x1b[H\x1b[2J" : (frame > 0 ? "\n" : ""))
          << FormatTop(*reply, RealClock().NowMs(), cols, rows);
    }
    out.flush();
  }
  return 0;
}

}  // namespace pinpoint::cli
