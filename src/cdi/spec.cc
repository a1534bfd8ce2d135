#include "cdi/spec.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "common/file_util.h"

namespace pinpoint::cdi {

using nlohmann::json;

namespace {

std::string BaseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

}  // namespace

std::string DeviceName(JobId lease) { return "L" + std::to_string(lease); }
std::string QualifiedName(JobId lease) { return std::string(kKind) + "=" + DeviceName(lease); }
std::string SpecFileName(JobId lease) {
  return "pinpoint.io-slice-L" + std::to_string(lease) + ".json";
}

json Spec(JobId lease, const LeaseEdits& edits, const std::string& hook_path,
          const std::string& socket, const std::string& cdi_dir) {
  json env = json::array();
  for (const auto& [k, v] : edits.env) env.push_back(k + "=" + v);
  json nodes = json::array();
  for (const auto& host : edits.device_nodes)
    nodes.push_back({{"path", "/dev/" + BaseName(host)}, {"hostPath", host}});
  json mounts = json::array();
  for (const auto& m : edits.mounts)
    mounts.push_back({{"hostPath", m.host_path},
                      {"containerPath", m.container_path},
                      {"options", {"rbind", m.read_only ? "ro" : "rw"}}});
  auto hook = [&](const char* name, const char* verb) {
    return json{{"hookName", name},
                {"path", hook_path},
                {"args",
                 {"pinpoint-cdi-hook", verb, std::to_string(lease), "--socket", socket, "--cdi-dir",
                  cdi_dir}}};
  };
  json hooks = json::array({hook("createRuntime", "attach"), hook("poststop", "close")});
  json device{{"name", DeviceName(lease)},
              {"containerEdits",
               {{"env", env}, {"deviceNodes", nodes}, {"mounts", mounts}, {"hooks", hooks}}}};
  return json{{"cdiVersion", kVersion}, {"kind", kKind}, {"devices", json::array({device})}};
}

Result<std::string> CheckHookPath(const std::string& path, uint32_t uid) {
  char real[PATH_MAX];
  if (path.empty() || path[0] != '/' || ::realpath(path.c_str(), real) == nullptr)
    return FailedPrecondition("pinpoint-cdi-hook was not found (" + path + ")");
  std::string canonical = real;
  // Every component from / down, links resolved: the runtime runs the hook as root, so no one
  // but root (or the caller) may be able to swap any of them.
  for (size_t end = 0; end != std::string::npos;) {
    end = canonical.find('/', end + 1);
    std::string part = end == std::string::npos ? canonical : canonical.substr(0, end);
    struct stat st {};
    if (::lstat(part.c_str(), &st) != 0)
      return FailedPrecondition(part + ": " + std::strerror(errno));
    bool last = end == std::string::npos;
    // A sticky directory (/tmp) lets no one else rename or remove what root (or `uid`) owns in it.
    bool others_may_swap =
        (st.st_mode & 022) != 0 && !(S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX));
    if ((st.st_uid != 0 && st.st_uid != uid) || others_may_swap ||
        !(last ? S_ISREG(st.st_mode) : S_ISDIR(st.st_mode)))
      return FailedPrecondition("the container runtime would run " + canonical + " as root, but " +
                                part +
                                " is not owned by root (or you) and writable by no one else");
  }
  return canonical;
}

Status SpecDir::Write(JobId lease, const json& spec) {
  if (dir_.empty() || dir_[0] != '/') return InvalidArgument("--cdi-dir must be an absolute path");
  Status made = MakeDirs(dir_, 0755);
  if (!made.ok()) return made;
  auto fd = OpenDirNoFollow(dir_);
  if (!fd.ok()) return fd.status();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return IoError(dir_ + ": " + std::strerror(errno));
  if ((st.st_uid != 0 && st.st_uid != ::geteuid()) || (st.st_mode & 022) != 0)
    return FailedPrecondition(dir_ + " must be owned by root (or you) and writable by no one else");
  return WriteFileAtomicAt(fd->get(), SpecFileName(lease), spec.dump(2) + "\n", 0644);
}

Status SpecDir::Remove(JobId lease) {
  if (dir_.empty() || dir_[0] != '/') return Status::Ok();
  auto fd = OpenDirNoFollow(dir_);
  if (!fd.ok()) return fd.status().code() == Code::kNotFound ? Status::Ok() : fd.status();
  return RemoveAt(fd->get(), SpecFileName(lease));
}

}  // namespace pinpoint::cdi
