#include "cli/submit_request.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <random>

#include "common/env_select.h"
#include "common/file_util.h"
#include "pinpoint/escape.h"
#include "pinpoint/units.h"

extern char** environ;

namespace pinpoint::cli {

std::string IdempotencyKey() {
  try {
    std::random_device random;
    std::string key = "cli-";
    static constexpr char kHex[] = "0123456789abcdef";
    for (int i = 0; i < 8; ++i) {
      uint32_t word = random();
      for (int nibble = 0; nibble < 4; ++nibble, word >>= 4) key += kHex[word & 0xf];
    }
    return key;
  } catch (const std::exception&) {
    return "";
  }
}

Result<std::vector<int>> ParseDeviceList(const std::string& text) {
  std::vector<int> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = std::min(text.find(',', start), text.size());
    std::string item = text.substr(start, comma - start);
    if (item.empty() || item.size() > 7 ||
        item.find_first_not_of("0123456789") != std::string::npos)
      return InvalidArgument("invalid --device '" + text + "' (device indices, e.g. 1 or 0,2)");
    out.push_back(std::stoi(item));
    start = comma + 1;
  }
  return out;
}

namespace {

// The job's environment as --export selects it (common/env_select.h); `dropped` gets the names
// left out for looking like secrets.
Result<std::map<std::string, std::string>> JobEnvironment(const std::string& export_text,
                                                          std::vector<std::string>* dropped) {
  auto spec = ParseExport(export_text);
  if (!spec.ok()) return spec.status();
  std::map<std::string, std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos && eq > 0) environment[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return SelectEnv(environment, *spec, DefaultEnvDeny(), dropped);
}

}  // namespace

Result<int> ParseGpuCount(const std::string& text, std::string* type) {
  size_t colon = text.rfind(':');
  std::string count = colon == std::string::npos ? text : text.substr(colon + 1);
  std::string model = colon == std::string::npos ? "" : text.substr(0, colon);
  if (count.empty() || count.size() > 4 ||
      count.find_first_not_of("0123456789") != std::string::npos ||
      (colon != std::string::npos && model.empty()) || std::stoi(count) > 1024)
    return InvalidArgument("--gpus: '" + EscapeForTerminal(text) +
                           "' is not a GPU count (N or TYPE:N, N at most 1024)");
  if (type != nullptr) *type = model;
  return std::stoi(count);
}

Result<uint64_t> ParseHostMem(const std::string& option, const std::string& text) {
  bool bare = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  auto mem = ParseSize(bare ? text + "M" : text);
  if (!mem.ok()) return InvalidArgument(option + ": " + mem.status().message());
  return *mem;
}

Result<uint64_t> ParseGpuMem(const std::string& text) {
  auto mem = ParseSize(text);
  if (!mem.ok()) return InvalidArgument("--gpu-mem: " + mem.status().message());
  if (*mem == 0) return InvalidArgument("--gpu-mem must be more than 0");
  return *mem;
}

namespace {

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string InDir(const std::string& cwd, const std::string& path) {
  return path.empty() || path[0] == '/' ? path : cwd + "/" + path;
}

}  // namespace

Status CheckRunnable(const JobRequest& r) {
  if (!r.as_user.empty() || r.argv.empty()) return Status::Ok();
  if (::access(r.cwd.c_str(), X_OK) != 0)
    return InvalidArgument("the job's working directory " + EscapeForTerminal(r.cwd) +
                           " cannot be entered by you: " + ErrnoText(errno));
  const std::string& program = r.argv.front();
  if (program.find('/') != std::string::npos) {
    std::string path = InDir(r.cwd, program);
    if (!IsExecutableFile(path))
      return InvalidArgument(
          "cannot run '" + EscapeForTerminal(program) +
          "': " + (::access(path.c_str(), F_OK) != 0 ? "no such file" : "not an executable file"));
  } else {
    auto it = r.env.find("PATH");
    std::string path = it != r.env.end() ? it->second : "/bin:/usr/bin";
    bool found = false;
    for (size_t at = 0; at <= path.size() && !found;) {
      size_t end = path.find(':', at);
      if (end == std::string::npos) end = path.size();
      std::string dir = path.substr(at, end - at);
      found = IsExecutableFile(InDir(r.cwd, (dir.empty() ? "." : dir) + "/" + program));
      at = end + 1;
    }
    if (!found) {
      std::string shown = path.size() > 200 ? path.substr(0, 200) + "..." : path;
      return InvalidArgument("cannot run '" + EscapeForTerminal(program) +
                             "': not found on the job's PATH (" + EscapeForTerminal(shown) + ")");
    }
  }
  for (const auto& [option, file] : {std::pair{"-o", &r.output_path}, {"-e", &r.error_path}}) {
    if (file->empty()) continue;
    std::string path = InDir(r.cwd, *file);
    std::string dir = path.substr(0, path.rfind('/'));
    if (dir.empty()) dir = "/";
    if (dir.find('%') != std::string::npos) continue;  // named per job: checked at launch
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
      return InvalidArgument(std::string(option) + ": the directory " + EscapeForTerminal(dir) +
                             " cannot be written by you: " + ErrnoText(errno));
  }
  return Status::Ok();
}

namespace {

// --mem-per-cpu: the job's memory for all its CPUs (those of every task), as Slurm counts it.
Status ApplyMemPerCpu(const SubmitArgs& a, JobRequest& r) {
  if (a.mem_per_cpu.empty()) return Status::Ok();
  if (!a.mem.empty())
    return InvalidArgument("--mem and --mem-per-cpu both given: give one of them");
  auto per_cpu = ParseHostMem("--mem-per-cpu", a.mem_per_cpu);
  if (!per_cpu.ok()) return per_cpu.status();
  if (*per_cpu > (uint64_t{1} << 60) / static_cast<uint64_t>(std::max(r.cpus, 1)))
    return InvalidArgument("--mem-per-cpu " + EscapeForTerminal(a.mem_per_cpu) + " x " +
                           std::to_string(r.cpus) + " CPUs is too much memory");
  r.mem_bytes = *per_cpu * static_cast<uint64_t>(r.cpus);
  return Status::Ok();
}

}  // namespace

Status AtScriptPlace(const SubmitArgs& a, Status s) {
  if (s.ok()) return s;
  const std::string& m = s.message();
  for (const auto& [name, place] : a.script_places)
    if (m.rfind(name + ":", 0) == 0 || m.rfind(name + " ", 0) == 0 || m.rfind(name + "/", 0) == 0)
      return Status(s.code(), place + ": " + m);
  return s;
}

Result<JobRequest> BuildRequest(const SubmitArgs& a, std::vector<std::string>* dropped) {
  JobRequest r;
  r.name = a.name;
  r.argv = a.command;
  if (r.argv.empty()) return InvalidArgument("submit needs a command to run (after --)");
  char cwd[4096];
  if (::getcwd(cwd, sizeof(cwd)) == nullptr)
    return InvalidArgument("cannot read the working directory");
  r.cwd = cwd;
  r.submit_dir = cwd;  // SLURM_SUBMIT_DIR: where submit ran, whatever --chdir says
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0) r.submit_host = host;
  if (!a.chdir.empty()) {
    r.cwd = a.chdir[0] == '/' ? a.chdir : r.cwd + "/" + a.chdir;
    struct stat st {};
    if (::stat(r.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return InvalidArgument("--chdir: " + EscapeForTerminal(a.chdir) + " is not a directory");
  }
  mode_t mask = ::umask(0);  // read by setting it: put back at once
  ::umask(mask);
  r.umask = static_cast<int>(mask & 0777);
  auto env = JobEnvironment(a.export_env, dropped);
  if (!env.ok()) return env.status();
  r.env = std::move(env).value();
  r.output_path = a.output;
  r.error_path = a.error;
  if (!a.gpu_mem.empty()) {
    auto mem = ParseGpuMem(a.gpu_mem);
    if (!mem.ok()) return mem.status();
    r.gpu_mem_bytes = *mem;
  }
  if (!a.gpu_share.empty()) {
    auto share = ParsePercent(a.gpu_share);
    if (!share.ok()) return share.status();
    if (a.gpu_mem.empty() && a.mig.empty())
      return InvalidArgument("--gpu-share needs --gpu-mem (a slice); whole GPUs have no share");
    r.gpu_share_pct = *share;
  }
  if (!a.devices.empty()) {
    auto devices = ParseDeviceList(a.devices);
    if (!devices.ok()) return devices.status();
    r.devices = *devices;
  }
  r.mig_profile = a.mig;
  int gpus = -1;
  if (!a.gpus_text.empty()) {
    auto count = ParseGpuCount(a.gpus_text, &r.gpu_type);
    if (!count.ok()) return count.status();
    gpus = *count;
  }
  if (gpus >= 0)
    r.gpus = gpus;
  else if (!r.devices.empty())
    r.gpus = static_cast<int>(r.devices.size());
  else
    r.gpus = r.gpu_mem_bytes > 0 || !r.mig_profile.empty() ? 1 : 0;
  if (r.gpus == 0 && r.gpu_mem_bytes > 0)
    return InvalidArgument("--gpu-mem needs --gpus of at least 1");
  if (!a.mem.empty()) {
    auto mem = ParseHostMem("--mem", a.mem);
    if (!mem.ok()) return mem.status();
    r.mem_bytes = *mem;
  }
  if (a.open_mode != "" && a.open_mode != "append" && a.open_mode != "truncate")
    return InvalidArgument("--open-mode: '" + EscapeForTerminal(a.open_mode) +
                           "' is neither append nor truncate");
  r.cpus = a.cpus;
  r.priority = a.priority;
  r.qos = a.qos;
  r.as_user = a.as_user;
  r.requeue = a.requeue;
  PP_RETURN_IF_ERROR(ApplyTasks(a.tasks, gpus >= 0, r));
  PP_RETURN_IF_ERROR(ApplyMemPerCpu(a, r));
  PP_RETURN_IF_ERROR(ApplySubmitSched(a.sched, &r));
  PP_RETURN_IF_ERROR(ValidateRequest(r));
  return r;
}

}  // namespace pinpoint::cli
