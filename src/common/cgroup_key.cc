#include "common/cgroup_key.h"

#include <string_view>
#include <vector>

namespace pinpoint {

namespace {

struct Line {
  std::string hierarchy;  // "0:" for v2, else the controllers field
  std::string path;
};

// "<id>:<controllers>:<path>" lines; malformed ones are skipped.
std::vector<Line> Lines(const std::string& text) {
  std::vector<Line> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    start = end + 1;
    size_t a = line.find(':');
    if (a == std::string_view::npos) continue;
    size_t b = line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    std::string_view id = line.substr(0, a), controllers = line.substr(a + 1, b - a - 1);
    std::string path(line.substr(b + 1));
    if (id == "0" && controllers.empty())
      out.push_back({"0:", path});
    else
      out.push_back({std::string(controllers), path});
  }
  return out;
}

Status CheckPath(const std::string& path) {
  if (path.empty() || path[0] != '/') return InvalidArgument("cgroup path is not absolute");
  for (char c : path) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return InvalidArgument("cgroup path holds a control character");
  }
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string_view part(path.data() + start, end - start);
    if (part == ".." || part == ".")
      return InvalidArgument("cgroup path has a '.' or '..' component");
    start = end + 1;
  }
  return Status::Ok();
}

bool IsUnder(const std::string& path, const std::string& base) {
  return path == base || (path.size() > base.size() && path.compare(0, base.size(), base) == 0 &&
                          path[base.size()] == '/');
}

}  // namespace

Result<std::string> ContainerCgroupKey(const std::string& text) {
  std::vector<Line> lines = Lines(text);
  for (const char* wanted : {"0:", "pids", "memory", "name=systemd"}) {
    for (const Line& l : lines) {
      if (l.hierarchy != wanted || l.path == "/" || l.path.empty()) continue;
      PP_RETURN_IF_ERROR(CheckPath(l.path));
      return l.hierarchy + ":" + l.path;
    }
  }
  return FailedPrecondition("it is in the root cgroup");
}

bool SplitCgroupKey(const std::string& key, std::string* hierarchy, std::string* path) {
  size_t colon = key.find(":/");  // controllers hold no '/'; "0::/x" splits after "0:"
  if (colon == std::string::npos || colon == 0) return false;
  *hierarchy = key.substr(0, colon);
  *path = key.substr(colon + 1);
  return CheckPath(*path).ok() && *path != "/";
}

bool InCgroup(const std::string& text, const std::string& key) {
  std::string hierarchy, path;
  if (!SplitCgroupKey(key, &hierarchy, &path)) return false;
  for (const Line& l : Lines(text)) {
    if (l.hierarchy == hierarchy && IsUnder(l.path, path)) return true;
  }
  return false;
}

}  // namespace pinpoint
