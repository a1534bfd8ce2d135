#include "bench/driver/options.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <sstream>

#include "pinpoint/units.h"

namespace pinpoint::bench {

namespace {

constexpr const char* kDescription =
    "pinpoint bench: runs N copies of a GPU workload in each sharing mode and measures "
    "throughput,\n"
    "job time and GPU energy per job.\n"
    "Modes: exclusive, timeslice, mps (each through a private pinpointd in that device mode),\n"
    "bare-mps (N copies under an MPS control daemon of its own, no pinpoint) and bare (one copy\n"
    "started directly). Needs an NVIDIA GPU with NVML; run it as root on an otherwise idle GPU.\n"
    "Arguments after -- go to the workload (for --workload cmd: the command itself).\n"
    "Writes results.json, points.csv, summary.csv and results.md to --out; bench/plot.sh makes\n"
    "the plots. Example:\n"
    "  pinpoint bench --workload busy --n 1,4,16 --reps 2 --out /tmp/busy -- --iters 300000000\n";

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, sep)) parts.push_back(part);
  return parts;
}

}  // namespace

const char* ModeName(Mode mode) {
  switch (mode) {
    case Mode::kExclusive:
      return "exclusive";
    case Mode::kTimeslice:
      return "timeslice";
    case Mode::kMps:
      return "mps";
    case Mode::kBareMps:
      return "bare-mps";
    case Mode::kBare:
      return "bare";
  }
  return "?";
}

std::optional<Mode> ModeFromName(const std::string& name) {
  for (Mode m : AllModes()) {
    if (name == ModeName(m)) return m;
  }
  return std::nullopt;
}

bool ThroughPinpoint(Mode mode) {
  return mode == Mode::kExclusive || mode == Mode::kTimeslice || mode == Mode::kMps;
}

const std::vector<Mode>& AllModes() {
  static const std::vector<Mode> kAll = {Mode::kExclusive, Mode::kTimeslice, Mode::kMps,
                                         Mode::kBareMps, Mode::kBare};
  return kAll;
}

Result<std::vector<int>> ParseIntList(const std::string& text) {
  std::vector<int> out;
  for (const std::string& part : Split(text, ',')) {
    size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (part.empty() || used != part.size() || v < 1 || v > 10000) {
      return InvalidArgument("'" + text + "' is not a list of positive numbers such as 1,2,4,16");
    }
    out.push_back(v);
  }
  if (out.empty()) return InvalidArgument("empty list of numbers");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<std::vector<int>> ParseIndexList(const std::string& text) {
  std::vector<int> out;
  for (const std::string& part : Split(text, ',')) {
    size_t used = 0;
    int v = -1;
    try {
      v = std::stoi(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (part.empty() || used != part.size() || part[0] == '-' || part[0] == '+' || v < 0 ||
        v >= kMaxBenchGpus) {
      return InvalidArgument("'" + text + "' is not a list of GPU indexes such as 0 or 0,1");
    }
    if (std::find(out.begin(), out.end(), v) != out.end()) {
      return InvalidArgument("GPU " + part + " is named twice in '" + text + "'");
    }
    out.push_back(v);
  }
  if (out.empty()) return InvalidArgument("empty list of GPU indexes");
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::vector<Mode>> ParseModes(const std::string& text) {
  std::vector<Mode> out;
  for (const std::string& part : Split(text, ',')) {
    std::optional<Mode> m = ModeFromName(part);
    if (!m) {
      return InvalidArgument("unknown mode '" + part +
                             "' (known: exclusive, timeslice, mps, bare-mps, bare)");
    }
    if (std::find(out.begin(), out.end(), *m) == out.end()) out.push_back(*m);
  }
  if (out.empty()) return InvalidArgument("no mode given");
  return out;
}

int RepsAt(const BenchOptions& options, int n) {
  return n == 1 ? std::max(options.reps, options.reps_at_1) : options.reps;
}

std::vector<int> NValuesFor(const BenchOptions& options, Mode mode) {
  auto it = options.n_for.find(mode);
  if (it != options.n_for.end()) return it->second;
  if (mode == Mode::kBare) return {1};
  return options.n;
}

Result<BenchOptions> ParseBenchArgs(const std::vector<std::string>& args, std::string* help) {
  help->clear();
  BenchOptions o;
  std::vector<std::string> own = args;
  auto dashdash = std::find(own.begin(), own.end(), "--");
  if (dashdash != own.end()) {
    o.workload_args.assign(dashdash + 1, own.end());
    own.erase(dashdash, own.end());
  }
  CLI::App app{kDescription, "pinpoint bench"};
  std::string n_text, modes_text, gpu_mem_text, share_text, gpus_text;
  std::vector<std::string> n_for_texts;
  bool no_warmup = false, no_cgroups = false, pin = false;
  app.add_option("-w,--workload", o.workload,
                 "busy (pp-busy), mlp (pp-mlp, cuBLAS), torch (train.py, PyTorch) or cmd (the "
                 "command after --)")
      ->capture_default_str();
  app.add_option("-n,--n", n_text, "copies at once, a list (default 1,2,4,8,16)");
  app.add_option("--n-for", n_for_texts,
                 "MODE=LIST: other N values for one mode (e.g. exclusive=1,4,16)");
  app.add_option("-m,--modes", modes_text,
                 "modes to run (default exclusive,timeslice,mps,bare-mps,bare)");
  app.add_option("-r,--reps", o.reps, "repetitions of each point; medians are reported")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  app.add_option("--reps-at-1", o.reps_at_1,
                 "repetitions of the N=1 points, when more than --reps (one job vs bare)")
      ->check(CLI::Range(0, 100));
  app.add_flag("--no-warmup", no_warmup, "no untimed copy per mode before measuring");
  app.add_option("-o,--out", o.out_dir, "output directory (default ./pinpoint-bench-WORKLOAD)");
  app.add_option("--bin-dir", o.bin_dir,
                 "where pinpointd, pinpoint, pinpoint-shim, pp-busy and pp-mlp are (default: next "
                 "to this program)");
  app.add_option("--gpu", gpus_text,
                 "NVML index of the GPU to measure, or a list (0,1): the copies of a batch go to "
                 "them in turn (default 0)");
  app.add_option(
      "--gpu-mem", gpu_mem_text,
      "device memory of each job's slice, context included (default: busy 1G, mlp 2G, torch 4G)");
  app.add_option("--gpu-share", share_text, "SM share of each job's slice (default none)");
  app.add_option("--cpus", o.cpus, "host CPUs of each job under pinpoint")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  app.add_flag("--no-cgroups", no_cgroups, "pinpointd applies no cgroup host limits to the jobs");
  app.add_flag("--pin", pin,
               "under pinpoint, submit copy i for GPU i mod G rather than let pinpointd place the "
               "copies (the bare modes always split them so)");
  app.add_option(
         "--budget-s", o.budget_s,
         "skip points that would end later than this many seconds after the start (0: no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--target-n", o.target_n, "the N at which the targets are judged")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--sample-ms", o.sample_ms, "GPU sampling period")
      ->capture_default_str()
      ->check(CLI::Range(10, 10000));
  app.add_option("--settle-ms", o.settle_ms, "idle time before each measurement")
      ->capture_default_str()
      ->check(CLI::Range(0, 60000));
  app.add_option("--scratch", o.scratch,
                 "directory for short-lived state: sockets, MPS pipes (keep the path short)")
      ->capture_default_str();
  app.add_flag("--keep-scratch", o.keep_scratch,
               "keep the scratch directory (job logs, daemon state)");
  app.add_option("--torch-script", o.torch_script,
                 "the PyTorch workload (default bench/workloads/train.py)");
  app.add_option("--python", o.python, "Python interpreter for --workload torch")
      ->capture_default_str();
  app.add_option("--backend", o.backend,
                 "GPU backend for sampling and for pinpointd (simulated ones are for tests)")
      ->capture_default_str();
  app.add_option("--mps-control", o.mps_control, "the MPS control binary")->capture_default_str();
  app.add_option("--cuda-version", o.cuda_version,
                 "CUDA version for the report (default: from nvidia-smi)");
  app.add_option(
      "--daemon-set", o.daemon_set,
      "KEY=VALUE: a pinpointd setting for every mode's daemon (VALUE as JSON, else a string), "
      "e.g. poll_interval_ms=10");

  std::vector<std::string> storage = {"pinpoint bench"};
  storage.insert(storage.end(), own.begin(), own.end());
  std::vector<const char*> argv;
  for (const std::string& s : storage) argv.push_back(s.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp&) {
    *help = app.help();
    return o;
  } catch (const CLI::ParseError& e) {
    return InvalidArgument(e.what());
  }
  if (o.workload != "busy" && o.workload != "mlp" && o.workload != "torch" && o.workload != "cmd") {
    return InvalidArgument("unknown workload '" + o.workload + "' (known: busy, mlp, torch, cmd)");
  }
  if (o.workload == "cmd" && o.workload_args.empty()) {
    return InvalidArgument("--workload cmd needs the command after --");
  }
  if (!n_text.empty()) {
    Result<std::vector<int>> n = ParseIntList(n_text);
    if (!n.ok()) return InvalidArgument("--n: " + n.status().message());
    o.n = *n;
  }
  for (const std::string& text : n_for_texts) {
    size_t eq = text.find('=');
    std::optional<Mode> mode =
        eq == std::string::npos ? std::nullopt : ModeFromName(text.substr(0, eq));
    if (!mode)
      return InvalidArgument("--n-for: expected MODE=LIST such as exclusive=1,4,16, got '" + text +
                             "'");
    Result<std::vector<int>> n = ParseIntList(text.substr(eq + 1));
    if (!n.ok()) return InvalidArgument("--n-for: " + n.status().message());
    o.n_for[*mode] = *n;
  }
  if (!modes_text.empty()) {
    Result<std::vector<Mode>> modes = ParseModes(modes_text);
    if (!modes.ok()) return InvalidArgument("--modes: " + modes.status().message());
    o.modes = *modes;
  }
  if (!gpu_mem_text.empty()) {
    Result<uint64_t> bytes = ParseSize(gpu_mem_text);
    if (!bytes.ok()) return InvalidArgument("--gpu-mem: " + bytes.status().message());
    if (*bytes == 0) return InvalidArgument("--gpu-mem: must be more than 0");
    o.gpu_mem_bytes = *bytes;
  }
  if (!gpus_text.empty()) {
    Result<std::vector<int>> gpus = ParseIndexList(gpus_text);
    if (!gpus.ok()) return InvalidArgument("--gpu: " + gpus.status().message());
    o.gpus = *gpus;
  }
  if (!share_text.empty()) {
    Result<int> share = ParsePercent(share_text);
    if (!share.ok()) return InvalidArgument("--gpu-share: " + share.status().message());
    o.gpu_share_pct = *share;
  }
  for (const std::string& kv : o.daemon_set) {
    if (kv.find('=') == std::string::npos || kv.front() == '=') {
      return InvalidArgument("--daemon-set: expected KEY=VALUE, got '" + kv + "'");
    }
  }
  o.warmup = !no_warmup;
  o.cgroups = !no_cgroups;
  o.pin = pin;
  if (o.out_dir.empty()) o.out_dir = "pinpoint-bench-" + o.workload;
  return o;
}

}  // namespace pinpoint::bench
