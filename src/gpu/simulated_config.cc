// SimulatedBackend::FromJson / FromFile: the small JSON description of a simulated machine.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpu/mig_profiles.h"
#include "gpu/simulated_backend.h"
#include "pinpoint/units.h"

namespace pinpoint::gpu {

namespace {

using nlohmann::json;

constexpr size_t kMaxGpus = 64;
constexpr size_t kMaxMigsPerGpu = 7;  // the most MIG instances any NVIDIA GPU offers
constexpr int kMaxSmCount = 10000;

Status Bad(const std::string& where, const std::string& what) {
  return InvalidArgument("simulated config: " + where + ": " + what);
}

// Fails on any key of `object` not in `known`, so that a typo does not pass silently.
Status CheckKeys(const json& object, const std::string& where,
                 std::initializer_list<const char*> known) {
  for (const auto& item : object.items()) {
    bool found = false;
    std::string list;
    for (const char* k : known) {
      found = found || item.key() == k;
      list += (list.empty() ? "" : ", ") + std::string(k);
    }
    if (!found) return Bad(where, "unknown key '" + item.key() + "' (known: " + list + ")");
  }
  return Status::Ok();
}

// A size: "80G", "9.75GiB" or a number of bytes. Must be positive.
Result<uint64_t> ParseMem(const json& value, const std::string& where) {
  uint64_t bytes = 0;
  if (value.is_string()) {
    Result<uint64_t> parsed = ParseSize(value.get<std::string>());
    if (!parsed.ok()) return Bad(where, parsed.status().message());
    bytes = *parsed;
  } else if (value.is_number_unsigned() ||
             (value.is_number_integer() && value.get<int64_t>() >= 0)) {
    bytes = value.get<uint64_t>();
  } else {
    return Bad(where, "expected a size such as \"80G\" or a number of bytes");
  }
  if (bytes == 0) return Bad(where, "must be more than 0 bytes");
  return bytes;
}

Result<int> ParseSmCount(const json& value, const std::string& where) {
  if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
      value.get<int64_t>() > kMaxSmCount) {
    return Bad(where, "expected an integer from 0 to " + std::to_string(kMaxSmCount));
  }
  return static_cast<int>(value.get<int64_t>());
}

Result<ComputeMode> ParseComputeMode(const json& value, const std::string& where) {
  if (value.is_string()) {
    for (ComputeMode mode : {ComputeMode::kDefault, ComputeMode::kExclusiveThread,
                             ComputeMode::kProhibited, ComputeMode::kExclusiveProcess}) {
      if (value.get<std::string>() == ComputeModeName(mode)) return mode;
    }
  }
  return Bad(where, "expected default, exclusive_thread, prohibited or exclusive_process");
}

Result<MigInfo> ParseMig(const json& entry, const std::string& where) {
  if (!entry.is_object()) return Bad(where, "expected an object");
  PP_RETURN_IF_ERROR(CheckKeys(entry, where, {"profile", "mem", "sm_count"}));
  if (!entry.contains("profile") || !entry["profile"].is_string() ||
      entry["profile"].get<std::string>().empty()) {
    return Bad(where + ".profile", "required, a name such as \"1g.10gb\"");
  }
  std::string profile = entry["profile"].get<std::string>();
  MigInfo mig = A100MigProfile(profile).value_or(MigInfo{});
  mig.profile = profile;
  if (entry.contains("mem")) {
    Result<uint64_t> mem = ParseMem(entry["mem"], where + ".mem");
    if (!mem.ok()) return mem.status();
    mig.mem_total_bytes = *mem;
  }
  if (entry.contains("sm_count")) {
    Result<int> sm_count = ParseSmCount(entry["sm_count"], where + ".sm_count");
    if (!sm_count.ok()) return sm_count.status();
    mig.sm_count = *sm_count;
  }
  if (mig.mem_total_bytes == 0) {
    return Bad(where, "profile '" + profile + "' is not a known A100 profile: give \"mem\"");
  }
  return mig;
}

Result<GpuInfo> ParseGpu(const json& entry, const std::string& where) {
  if (!entry.is_object()) return Bad(where, "expected an object");
  PP_RETURN_IF_ERROR(CheckKeys(entry, where, {"name", "mem", "sm_count", "compute_mode", "mig"}));
  GpuInfo gpu;
  gpu.name = "Simulated GPU";
  if (entry.contains("name")) {
    if (!entry["name"].is_string() || entry["name"].get<std::string>().empty()) {
      return Bad(where + ".name", "expected a non-empty string");
    }
    gpu.name = entry["name"].get<std::string>();
  }
  if (!entry.contains("mem")) return Bad(where + ".mem", "required, e.g. \"80G\"");
  Result<uint64_t> mem = ParseMem(entry["mem"], where + ".mem");
  if (!mem.ok()) return mem.status();
  gpu.mem_total_bytes = *mem;
  if (entry.contains("sm_count")) {
    Result<int> sm_count = ParseSmCount(entry["sm_count"], where + ".sm_count");
    if (!sm_count.ok()) return sm_count.status();
    gpu.sm_count = *sm_count;
  }
  if (entry.contains("compute_mode")) {
    Result<ComputeMode> mode = ParseComputeMode(entry["compute_mode"], where + ".compute_mode");
    if (!mode.ok()) return mode.status();
    gpu.compute_mode = *mode;
  }
  if (!entry.contains("mig")) return gpu;
  const json& migs = entry["mig"];
  if (!migs.is_array() || migs.empty() || migs.size() > kMaxMigsPerGpu) {
    return Bad(where + ".mig", "expected a list of 1 to 7 MIG instances");
  }
  uint64_t mig_bytes = 0;
  int mig_sms = 0;
  for (size_t i = 0; i < migs.size(); ++i) {
    Result<MigInfo> mig = ParseMig(migs[i], where + ".mig[" + std::to_string(i) + "]");
    if (!mig.ok()) return mig.status();
    mig_bytes += mig->mem_total_bytes;
    mig_sms += mig->sm_count;
    gpu.migs.push_back(std::move(mig).value());
  }
  if (mig_bytes > gpu.mem_total_bytes) {
    return Bad(where + ".mig", "the instances' memory exceeds the GPU's");
  }
  if (gpu.sm_count > 0 && mig_sms > gpu.sm_count) {
    return Bad(where + ".mig", "the instances' SMs exceed the GPU's sm_count");
  }
  gpu.mig_enabled = true;
  return gpu;
}

Result<std::vector<GpuInfo>> ParseConfig(const json& config) {
  if (!config.is_object()) return Bad("top level", "expected an object {\"gpus\": [...]}");
  PP_RETURN_IF_ERROR(CheckKeys(config, "top level", {"gpus"}));
  if (!config.contains("gpus") || !config["gpus"].is_array() || config["gpus"].empty() ||
      config["gpus"].size() > kMaxGpus) {
    return Bad("gpus", "required, a list of 1 to " + std::to_string(kMaxGpus) + " GPUs");
  }
  std::vector<GpuInfo> gpus;
  for (size_t i = 0; i < config["gpus"].size(); ++i) {
    Result<GpuInfo> gpu = ParseGpu(config["gpus"][i], "gpus[" + std::to_string(i) + "]");
    if (!gpu.ok()) return gpu.status();
    gpus.push_back(std::move(gpu).value());
  }
  return gpus;
}

}  // namespace

Result<std::unique_ptr<SimulatedBackend>> SimulatedBackend::FromJson(const json& config) {
  try {
    Result<std::vector<GpuInfo>> gpus = ParseConfig(config);
    if (!gpus.ok()) return gpus.status();
    return std::unique_ptr<SimulatedBackend>(new SimulatedBackend("config", std::move(*gpus)));
  } catch (const json::exception& e) {  // not expected: every access is type-checked first
    return InvalidArgument(std::string("simulated config: ") + e.what());
  }
}

Result<std::unique_ptr<SimulatedBackend>> SimulatedBackend::FromFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return NotFound("cannot read simulated node file '" + path + "': " + std::strerror(errno));
  }
  std::stringstream text;
  text << in.rdbuf();
  json config = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded()) {
    return InvalidArgument("simulated node file '" + path + "': not valid JSON");
  }
  Result<std::unique_ptr<SimulatedBackend>> backend = FromJson(config);
  if (!backend.ok()) {
    return InvalidArgument("simulated node file '" + path + "': " + backend.status().message());
  }
  return backend;
}

}  // namespace pinpoint::gpu
