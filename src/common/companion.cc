#include "common/companion.h"

#include <unistd.h>

namespace pinpoint {

std::string CompanionPathFor(const std::string& exe, const std::string& name,
                             const std::function<bool(const std::string&)>& executable) {
  std::string dir = exe.substr(0, exe.rfind('/'));
  std::string beside = dir + "/" + name;
  if (executable(beside)) return beside;
  size_t parent = dir.rfind('/');
  if (parent == std::string::npos || dir.substr(parent) != "/bin") return beside;
  std::string libexec = dir.substr(0, parent) + "/libexec/pinpoint/" + name;
  return executable(libexec) ? libexec : beside;
}

std::string CompanionPath(const std::string& name) {
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return name;
  return CompanionPathFor(
      std::string(exe, static_cast<size_t>(n)), name,
      [](const std::string& path) { return ::access(path.c_str(), X_OK) == 0; });
}

}  // namespace pinpoint
