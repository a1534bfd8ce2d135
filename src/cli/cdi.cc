#include "cli/cdi.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <istream>
#include <ostream>

#include "common/companion.h"
#include "common/file_util.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/client.h"
#include "pinpoint/escape.h"
#include "pinpoint/units.h"

namespace pinpoint::cli {

using nlohmann::json;

namespace {

constexpr size_t kMaxStateBytes = 64 * 1024;
constexpr size_t kMaxConfigBytes = 4 * 1024 * 1024;

std::string BaseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// Reads at most max_bytes + 1 from `in`: more than max_bytes is an error, not a cut.
Result<std::string> ReadBoundedStream(std::istream& in, size_t max_bytes, const char* what) {
  std::string text(max_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > max_bytes)
    return InvalidArgument(std::string(what) + " is larger than " + std::to_string(max_bytes) + " bytes");
  return text;
}

Result<std::string> ReadConfigJson(const std::string& bundle) {
  if (bundle.empty() || bundle[0] != '/') return InvalidArgument("the OCI state's bundle is not an absolute path");
  auto dir = OpenDirNoFollow(bundle);
  if (!dir.ok()) return dir.status();
  return ReadFileBoundedAt(dir->get(), "config.json", kMaxConfigBytes);
}

}  // namespace

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
    if (::lstat(part.c_str(), &st) != 0) return FailedPrecondition(part + ": " + std::strerror(errno));
    bool last = end == std::string::npos;
    // A sticky directory (/tmp) lets no one else rename or remove what root (or `uid`) owns in it.
    bool others_may_swap = (st.st_mode & 022) != 0 && !(S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX));
    if ((st.st_uid != 0 && st.st_uid != uid) || others_may_swap ||
        !(last ? S_ISREG(st.st_mode) : S_ISDIR(st.st_mode)))
      return FailedPrecondition("the container runtime would run " + canonical + " as root, but " + part +
                                " is not owned by root (or you) and writable by no one else");
  }
  return canonical;
}

std::string CdiDeviceName(JobId lease) { return "L" + std::to_string(lease); }
std::string CdiQualifiedName(JobId lease) { return std::string(kCdiKind) + "=" + CdiDeviceName(lease); }
std::string CdiSpecFileName(JobId lease) { return "pinpoint.io-slice-L" + std::to_string(lease) + ".json"; }

json CdiSpec(JobId lease, const LeaseEdits& edits, const std::string& hook_path, const std::string& socket,
             const std::string& cdi_dir) {
  json env = json::array();
  for (const auto& [k, v] : edits.env) env.push_back(k + "=" + v);
  json nodes = json::array();
  for (const auto& host : edits.device_nodes) nodes.push_back({{"path", "/dev/" + BaseName(host)}, {"hostPath", host}});
  json mounts = json::array();
  for (const auto& m : edits.mounts)
    mounts.push_back({{"hostPath", m.host_path},
                      {"containerPath", m.container_path},
                      {"options", {"rbind", m.read_only ? "ro" : "rw"}}});
  auto hook = [&](const char* name, const char* verb) {
    return json{{"hookName", name},
                {"path", hook_path},
                {"args", {"pinpoint-cdi-hook", verb, std::to_string(lease), "--socket", socket, "--cdi-dir", cdi_dir}}};
  };
  json hooks = json::array({hook("createRuntime", "attach"), hook("poststop", "close")});
  json device{{"name", CdiDeviceName(lease)},
              {"containerEdits", {{"env", env}, {"deviceNodes", nodes}, {"mounts", mounts}, {"hooks", hooks}}}};
  return json{{"cdiVersion", kCdiVersion}, {"kind", kCdiKind}, {"devices", json::array({device})}};
}

Status WriteCdiSpec(const std::string& dir, const std::string& name, const std::string& text) {
  if (dir.empty() || dir[0] != '/') return InvalidArgument("--cdi-dir must be an absolute path");
  Status made = MakeDirs(dir, 0755);
  if (!made.ok()) return made;
  auto fd = OpenDirNoFollow(dir);
  if (!fd.ok()) return fd.status();
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return IoError(dir + ": " + std::strerror(errno));
  if ((st.st_uid != 0 && st.st_uid != ::geteuid()) || (st.st_mode & 022) != 0)
    return FailedPrecondition(dir + " must be owned by root (or you) and writable by no one else");
  return WriteFileAtomicAt(fd->get(), name, text, 0644);
}

Result<int> RunCdi(const std::string& socket, bool json_output, const CdiArgs& args, std::ostream& out) {
  OpenLeaseRequest op;
  op.request.gpus = args.gpus;
  op.request.name = args.name;
  op.request.as_user = args.user;
  if (!args.gpu_mem.empty()) {
    auto mem = ParseSize(args.gpu_mem);
    if (!mem.ok()) return mem.status();
    op.request.gpu_mem_bytes = *mem;
  }
  if (!args.gpu_share.empty()) {
    auto share = ParsePercent(args.gpu_share);
    if (!share.ok()) return share.status();
    op.request.gpu_share_pct = *share;
  }
  if (args.cdi_dir.empty() || args.cdi_dir[0] != '/') return InvalidArgument("--cdi-dir must be an absolute path");
  auto client = Client::Connect(socket);
  if (!client.ok()) return client.status();
  auto opened = client->OpenLease(op);
  if (!opened.ok()) return opened.status();
  JobId id = opened->lease.id;
  auto hook = CheckHookPath(CompanionPath("pinpoint-cdi-hook"), ::geteuid());
  Status written = hook.status();
  if (written.ok()) {
    json spec = CdiSpec(id, opened->edits, *hook, socket, args.cdi_dir);
    written = WriteCdiSpec(args.cdi_dir, CdiSpecFileName(id), spec.dump(2) + "\n");
  }
  if (!written.ok()) {
    (void)client->CloseLease(CloseLeaseRequest{id});  // no spec: nothing could attach
    return written;
  }
  if (json_output) {
    out << json{{"device", CdiQualifiedName(id)},
                {"lease", ToJson(opened->lease)},
                {"spec", args.cdi_dir + "/" + CdiSpecFileName(id)}}
               .dump(2)
        << "\n";
  } else {
    out << CdiQualifiedName(id) << "\n";
  }
  return 0;
}

Result<OciState> ParseOciState(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return InvalidArgument("the OCI state on stdin is not a JSON object");
  OciState s;
  if (!j.contains("pid") || !j["pid"].is_number_integer() || j["pid"].get<int64_t>() <= 0)
    return InvalidArgument("the OCI state has no positive \"pid\"");
  s.pid = j["pid"].get<int64_t>();
  if (j.contains("bundle") && j["bundle"].is_string()) s.bundle = j["bundle"].get<std::string>();
  return s;
}

Result<uint32_t> ParseOciUid(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return InvalidArgument("config.json is not a JSON object");
  // The OCI runtime spec: a process with no user runs as uid 0.
  if (!j.contains("process") || !j["process"].is_object()) return 0u;
  const json& p = j["process"];
  if (!p.contains("user") || !p["user"].is_object() || !p["user"].contains("uid")) return 0u;
  const json& uid = p["user"]["uid"];
  if (!uid.is_number_unsigned() || uid.get<uint64_t>() > 0xFFFFFFFEu)
    return InvalidArgument("config.json: process.user.uid is not a uid");
  return static_cast<uint32_t>(uid.get<uint64_t>());
}

namespace {

// The attach request from the container's state on `in` and its bundle's config.json, read
// before pinpointd is asked anything.
Result<AttachLeaseRequest> HookAttachRequest(JobId id, std::istream& in) {
  auto text = ReadBoundedStream(in, kMaxStateBytes, "the OCI state on stdin");
  if (!text.ok()) return text.status();
  auto state = ParseOciState(*text);
  if (!state.ok()) return state.status();
  // The container's uid always goes with the attach: pinpointd refuses a container of another
  // user than the lease's, whose processes the lease's owner could otherwise stop.
  auto config = ReadConfigJson(state->bundle);
  if (!config.ok()) return config.status();
  auto uid = ParseOciUid(*config);
  if (!uid.ok()) return uid.status();
  return AttachLeaseRequest{id, state->pid, *uid};
}

}  // namespace

int RunCdiHook(int argc, char** argv, std::istream& in, std::ostream& err) {
  std::string verb, socket = DefaultSocketPath(), cdi_dir = kDefaultCdiDir;
  JobId id = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--socket" || a == "--cdi-dir") && i + 1 < argc) {
      (a == "--socket" ? socket : cdi_dir) = argv[++i];
    } else if (verb.empty()) {
      verb = a;
    } else if (id == 0) {
      char* end = nullptr;
      long long v = std::strtoll(a.c_str(), &end, 10);
      if (end == a.c_str() || *end != '\0' || v <= 0) {
        err << "pinpoint-cdi-hook: '" << EscapeForTerminal(a) << "' is not a lease id\n";
        return 2;
      }
      id = v;
    }
  }
  if ((verb != "attach" && verb != "close") || id == 0) {
    err << "pinpoint-cdi-hook: usage: pinpoint-cdi-hook attach|close LEASE [--socket S] [--cdi-dir D]\n";
    return 2;
  }
  Result<AttachLeaseRequest> attach = AttachLeaseRequest{};
  if (verb == "attach") attach = HookAttachRequest(id, in);
  Status s = attach.status();
  auto client = s.ok() ? Client::Connect(socket) : Result<Client>(s);
  if (s.ok()) s = client.status();
  if (s.ok() && verb == "attach") {
    auto reply = client->AttachLease(*attach);
    if (!reply.ok()) s = reply.status();
  }
  if (s.ok() && verb == "close") {
    auto reply = client->CloseLease(CloseLeaseRequest{id});
    if (!reply.ok()) s = reply.status();
  }
  if (verb == "close" && cdi_dir.size() > 1 && cdi_dir[0] == '/') {
    auto dir = OpenDirNoFollow(cdi_dir);
    if (dir.ok()) (void)RemoveAt(dir->get(), CdiSpecFileName(id));
  }
  if (!s.ok()) {
    err << "pinpoint-cdi-hook: lease " << id << ": " << EscapeForTerminal(s.message()) << "\n";
    return 1;
  }
  return 0;
}

}  // namespace pinpoint::cli
