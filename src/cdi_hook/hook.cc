#include "cdi_hook/hook.h"

#include <cstdlib>
#include <istream>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cdi/spec.h"
#include "common/file_util.h"
#include "pinpoint/client.h"
#include "pinpoint/escape.h"

namespace pinpoint::cdi {

using nlohmann::json;

namespace {

constexpr size_t kMaxStateBytes = 64 * 1024;
constexpr size_t kMaxConfigBytes = 4 * 1024 * 1024;

// Reads at most max_bytes + 1 from `in`: more than max_bytes is an error, not a cut.
Result<std::string> ReadBoundedStream(std::istream& in, size_t max_bytes, const char* what) {
  std::string text(max_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > max_bytes)
    return InvalidArgument(std::string(what) + " is larger than " + std::to_string(max_bytes) +
                           " bytes");
  return text;
}

Result<std::string> ReadConfigJson(const std::string& bundle) {
  if (bundle.empty() || bundle[0] != '/')
    return InvalidArgument("the OCI state's bundle is not an absolute path");
  auto dir = OpenDirNoFollow(bundle);
  if (!dir.ok()) return dir.status();
  return ReadFileBoundedAt(dir->get(), "config.json", kMaxConfigBytes);
}

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

int RunHook(int argc, char** argv, std::istream& in, std::ostream& err) {
  std::string verb, socket = DefaultSocketPath(), cdi_dir = kDefaultDir;
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
    err << "pinpoint-cdi-hook: usage: pinpoint-cdi-hook attach|close LEASE [--socket S] [--cdi-dir "
           "D]\n";
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
  if (verb == "close" && cdi_dir.size() > 1 && cdi_dir[0] == '/') (void)SpecDir(cdi_dir).Remove(id);
  if (!s.ok()) {
    err << "pinpoint-cdi-hook: lease " << id << ": " << EscapeForTerminal(s.message()) << "\n";
    return 1;
  }
  return 0;
}

}  // namespace pinpoint::cdi
