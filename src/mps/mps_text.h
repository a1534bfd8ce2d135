// Text and names shared by MpsDaemons' files (mps_daemons.cc, mps_daemons_start.cc): what the
// MPS programs are called, the environment of a control command, and how user-written text is
// made printable. Internal to src/mps.
#pragma once

#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "pinpoint/escape.h"

namespace pinpoint::mps {

inline constexpr char kFatalMarker[] = "encountered a fatal GPU error";
inline constexpr char kControlProgram[] = "nvidia-cuda-mps-control";
inline constexpr char kServerProgram[] = "nvidia-cuda-mps-server";
// The foreground control daemon's own output, in the user's log directory, written by the user.
inline constexpr char kForegroundLog[] = "control-foreground.log";

// User-written text for one log line or job detail: escaped like everything shown to people,
// and at most 300 bytes of it.
inline std::string Printable(std::string_view text) {
  return EscapeForTerminal(text.substr(0, 300));
}

inline std::string PathEnv() {
  const char* p = std::getenv("PATH");
  return std::string("PATH=") + (p ? p : "/usr/local/nvidia/bin:/usr/bin:/bin");
}

// The environment of a control command (a probe's too): the daemon's pipe and log directories.
inline std::vector<std::string> CommandEnv(const std::string& pipe_dir,
                                           const std::string& log_dir) {
  return {PathEnv(), "CUDA_MPS_PIPE_DIRECTORY=" + pipe_dir, "CUDA_MPS_LOG_DIRECTORY=" + log_dir};
}

inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

inline bool IsNumber(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace pinpoint::mps
