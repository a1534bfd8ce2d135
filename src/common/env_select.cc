#include "common/env_select.h"

#include <fnmatch.h>

#include <algorithm>

namespace pinpoint {

const std::vector<std::string>& DefaultEnvDeny() {
  // Names that hold credentials in the tools ML users run (Hugging Face, W&B, cloud SDKs, git
  // forges, databases), and the agent sockets that stand for them.
  static const std::vector<std::string> kPatterns = {
      "*TOKEN",         "*SECRET*",      "*PASSWORD*", "*PASSWD*",
      "*CREDENTIAL*",   "*_KEY",         "*_KEY_ID",   "*APIKEY*",
      "*API_KEY*",      "*PRIVATE_KEY*", "*_PAT",      "SSH_AUTH_SOCK",
      "GPG_AGENT_INFO", "KRB5CCNAME",    "*_AUTH",     "*COOKIE*",
  };
  return kPatterns;
}

std::optional<std::string> DeniedBy(const std::string& name,
                                    const std::vector<std::string>& patterns) {
  for (const auto& p : patterns) {
    if (::fnmatch(p.c_str(), name.c_str(), FNM_CASEFOLD) == 0) return p;
  }
  return std::nullopt;
}

Status ValidateEnvPattern(const std::string& pattern) {
  if (pattern.empty() || pattern.size() > 256)
    return InvalidArgument("a pattern is 1 to 256 characters");
  for (char c : pattern) {
    if (c <= ' ' || c > '~')
      return InvalidArgument("'" + pattern + "' holds a space or a non-ASCII character");
  }
  return Status::Ok();
}

namespace {

bool IsName(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c <= ' ' || c > '~' || c == '=') return false;
  }
  return true;
}

}  // namespace

Result<ExportSpec> ParseExport(const std::string& text) {
  ExportSpec spec;
  spec.all = false;
  size_t start = 0;
  bool first = true;
  while (start <= text.size()) {
    size_t comma = std::min(text.find(',', start), text.size());
    std::string item = text.substr(start, comma - start);
    start = comma + 1;
    if (first && (item == "ALL" || item == "NONE")) {
      spec.all = item == "ALL";
      first = false;
      continue;
    }
    first = false;
    if (item == "ALL" || item == "NONE")
      return InvalidArgument("--export: " + item + " may only come first (e.g. ALL,VAR=value)");
    size_t eq = item.find('=');
    std::string name = item.substr(0, eq);
    if (!IsName(name))
      return InvalidArgument(
          "--export: '" + item +
          "' is not a variable name (ALL, NONE, NAME or NAME=value, comma-separated)");
    if (eq == std::string::npos)
      spec.names.push_back(name);
    else
      spec.set[name] = item.substr(eq + 1);
  }
  return spec;
}

Result<std::map<std::string, std::string>> SelectEnv(
    const std::map<std::string, std::string>& environment, const ExportSpec& spec,
    const std::vector<std::string>& deny, std::vector<std::string>* dropped) {
  auto refuse = [&](const std::string& name) -> Status {
    auto pattern = DeniedBy(name, deny);
    if (!pattern) return Status::Ok();
    return InvalidArgument(
        "--export: " + name + " matches " + *pattern +
        ": pinpoint does not send variables that look like secrets, since it "
        "stores a job's environment (docs/security.md); let the job read it from a file");
  };
  std::map<std::string, std::string> out;
  if (spec.all) out = environment;
  for (const auto& name : spec.names) {
    PP_RETURN_IF_ERROR(refuse(name));
    auto it = environment.find(name);
    if (it != environment.end()) out[name] = it->second;
  }
  for (const auto& [name, value] : spec.set) {
    PP_RETURN_IF_ERROR(refuse(name));
    out[name] = value;
  }
  std::vector<std::string> gone = DropDenied(out, deny);
  if (dropped != nullptr) *dropped = std::move(gone);
  return out;
}

std::vector<std::string> DropDenied(std::map<std::string, std::string>& env,
                                    const std::vector<std::string>& deny) {
  std::vector<std::string> gone;
  for (auto it = env.begin(); it != env.end();) {
    if (DeniedBy(it->first, deny)) {
      gone.push_back(it->first);
      it = env.erase(it);
    } else {
      ++it;
    }
  }
  return gone;
}

}  // namespace pinpoint
