// The fake NVML's MIG (fake_nvml.cc): GPU instance profiles and their placements, and GPU 1's GPU
// and compute instances made and destroyed by the rules NVML enforces:
//   - a GPU instance goes only where its profile may be placed (NVML's possible placements),
//     never over memory slices another instance covers, and no more of a profile than fit;
//     otherwise NVML_ERROR_INSUFFICIENT_RESOURCES (a bad placement: INVALID_ARGUMENT);
//   - a new GPU instance gets the lowest free id from 1; GPU 0 (MIG disabled) makes none;
//   - a GPU instance holds at most one compute instance here, over all its compute slices;
//   - a compute instance a process runs on, or a GPU instance with a compute instance or a
//     process, is not destroyed: NVML_ERROR_IN_USE.
// Faults: fake_nvml_FailComputeInstanceCreates(n) makes the next n compute instance creates fail
// (NVML_ERROR_UNKNOWN), leaving their GPU instance behind as NVML does.
#include <cstdio>
#include <cstring>
#include <iterator>
#include <type_traits>

#include "fake_nvml/fake_nvml_state.h"

using namespace fake_nvml;  // NOLINT(google-build-using-namespace): a C shim

namespace fake_nvml {

const std::vector<GiProfile>& GiProfiles() {
  static const std::vector<GiProfile> profiles = {
      {0, 19, "MIG 1g.10gb", 1, 7, 16, 9984, 1, {0, 1, 2, 3, 4, 5, 6}},
      {1, 14, "MIG 2g.20gb", 2, 3, 32, 20096, 2, {0, 2, 4}},
      {2, 9, "MIG 3g.40gb", 3, 2, 60, 40320, 4, {0, 4}},
      {3, 5, "MIG 4g.40gb", 4, 1, 64, 40320, 4, {0}},
      {4, 0, "MIG 7g.80gb", 7, 1, 132, 80896, 8, {0}},
      {7, 20, "MIG 1g.10gb+me", 1, 1, 16, 9984, 1, {0, 1, 2, 3, 4, 5, 6}},
      {9, 15, "MIG 1g.20gb", 1, 4, 26, 20096, 2, {0, 2, 4, 6}},
  };
  return profiles;
}

const GiProfile* GiProfileById(unsigned int id) {
  for (const GiProfile& p : GiProfiles())
    if (p.id == id) return &p;
  return nullptr;
}

}  // namespace fake_nvml

namespace {

// The compute instance profile indices (NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE ...) and their
// compute slices; the fake gives each profile the id of its index.
constexpr unsigned int kCiSlices[] = {1, 2, 3, 4, 7};

GpuInstance ToGi(FakeMig* m) { return reinterpret_cast<GpuInstance>(m); }
FakeMig* FromGi(GpuInstance h) { return reinterpret_cast<FakeMig*>(h); }
ComputeInstance ToCi(FakeMig* m) { return reinterpret_cast<ComputeInstance>(m); }
FakeMig* FromCi(ComputeInstance h) { return reinterpret_cast<FakeMig*>(h); }

// The checks of a GPU or compute instance handle: NVML initialised, an instance that exists.
Return CheckInstance(FakeMig* m) {
  if (g_state.init_refs <= 0) return kErrorUninitialized;
  if (m == nullptr || !m->used) return kErrorInvalidArgument;
  return g_state.lost[1] ? kErrorGpuIsLost : kSuccess;
}

bool HasProcess(unsigned int gpu_instance_id) {
  for (const ProcessInfo& p : g_state.mig_processes)
    if (p.gpuInstanceId == gpu_instance_id) return true;
  return false;
}

}  // namespace

extern "C" {

// ---- Control functions for tests (not NVML). ----
void fake_nvml_FailComputeInstanceCreates(int count) { g_state.failing_ci_creates = count; }
void fake_nvml_ClearMigProcesses() { g_state.mig_processes.clear(); }
// GPU instances of GPU 1, with or without a compute instance.
int fake_nvml_GpuInstanceCount() {
  int n = 0;
  for (const FakeMig& m : g_state.migs) n += m.used ? 1 : 0;
  return n;
}

// ---- NVML. ----
Return nvmlDeviceGetGpuInstanceProfileInfoV(Device h, unsigned int profile,
                                            GpuInstanceProfileInfoV2* info) {
  if (Return r = Check(h); r != kSuccess) return r;
  if (FromHandle(h)->is_mig || info == nullptr || info->version != kGpuInstanceProfileInfoV2)
    return kErrorInvalidArgument;
  for (const GiProfile& p : GiProfiles()) {
    if (p.index != profile) continue;
    unsigned int version = info->version;
    *info = GpuInstanceProfileInfoV2{};
    info->version = version;
    info->id = p.id;
    info->sliceCount = p.slices;
    info->instanceCount = p.count;
    info->multiprocessorCount = p.sms;
    info->memorySizeMB = p.mem_mib;
    std::strncpy(info->name, p.name, sizeof(info->name) - 1);
    return kSuccess;
  }
  return profile < 16 ? kErrorNotSupported : kErrorInvalidArgument;
}

Return nvmlDeviceGetGpuInstancePossiblePlacements_v2(Device h, unsigned int profile_id,
                                                     GpuInstancePlacement* placements,
                                                     unsigned int* count) {
  if (Return r = Check(h); r != kSuccess) return r;
  const GiProfile* p = GiProfileById(profile_id);
  if (p == nullptr || count == nullptr) return kErrorInvalidArgument;
  if (placements == nullptr) {
    *count = static_cast<unsigned int>(p->starts.size());
    return kSuccess;
  }
  if (*count < p->starts.size()) return kErrorInsufficientSize;
  for (size_t i = 0; i < p->starts.size(); ++i) placements[i] = {p->starts[i], p->size};
  *count = static_cast<unsigned int>(p->starts.size());
  return kSuccess;
}

Return nvmlDeviceCreateGpuInstanceWithPlacement(Device h, unsigned int profile_id,
                                                const GpuInstancePlacement* placement,
                                                GpuInstance* out) {
  if (Return r = Check(h); r != kSuccess) return r;
  const FakeDevice* d = FromHandle(h);
  if (d->gpu == 0) return kErrorNotSupported;  // MIG disabled
  const GiProfile* p = GiProfileById(profile_id);
  if (d->is_mig || p == nullptr || placement == nullptr || out == nullptr)
    return kErrorInvalidArgument;
  bool placeable = placement->size == p->size;
  bool listed = false;
  for (unsigned int s : p->starts) listed = listed || s == placement->start;
  if (!placeable || !listed) return kErrorInvalidArgument;
  unsigned int of_profile = 0;
  FakeMig* free_slot = nullptr;
  for (FakeMig& m : g_state.migs) {
    if (!m.used) {
      if (free_slot == nullptr) free_slot = &m;
      continue;
    }
    of_profile += m.profile_id == profile_id ? 1 : 0;
    unsigned int end = m.start + GiProfileById(m.profile_id)->size;
    if (m.start < placement->start + p->size && placement->start < end)
      return kErrorInsufficientResources;
  }
  if (of_profile >= p->count || free_slot == nullptr) return kErrorInsufficientResources;
  auto taken = [](unsigned int id) {
    for (const FakeMig& m : g_state.migs)
      if (m.used && m.device.gpu_instance_id == id) return true;
    return false;
  };
  unsigned int id = 1;
  while (taken(id)) ++id;
  char uuid[64];
  std::snprintf(uuid, sizeof(uuid), "MIG-fa4e0000-0001-%04x-8000-000000000000",
                g_state.next_uuid++);
  free_slot->used = true;
  free_slot->has_ci = false;
  free_slot->profile_id = profile_id;
  free_slot->start = placement->start;
  free_slot->device = {
      1,    true, uuid,  std::string("NVIDIA A100-SXM4-80GB ") + p->name, p->mem_mib * kMiB,
      true, id,   p->sms};
  *out = ToGi(free_slot);
  return kSuccess;
}

Return nvmlDeviceGetGpuInstanceById(Device h, unsigned int id, GpuInstance* out) {
  if (Return r = Check(h); r != kSuccess) return r;
  if (FromHandle(h)->gpu == 0) return kErrorNotSupported;
  if (FromHandle(h)->is_mig || out == nullptr) return kErrorInvalidArgument;
  for (FakeMig& m : g_state.migs) {
    if (m.used && m.device.gpu_instance_id == id) {
      *out = ToGi(&m);
      return kSuccess;
    }
  }
  return kErrorNotFound;
}

Return nvmlGpuInstanceGetInfo(GpuInstance gi, GpuInstanceInfo* info) {
  FakeMig* m = FromGi(gi);
  if (Return r = CheckInstance(m); r != kSuccess) return r;
  if (info == nullptr) return kErrorInvalidArgument;
  *info = GpuInstanceInfo{ToHandle(&g_devices[1]),
                          m->device.gpu_instance_id,
                          m->profile_id,
                          {m->start, GiProfileById(m->profile_id)->size}};
  return kSuccess;
}

Return nvmlGpuInstanceDestroy(GpuInstance gi) {
  FakeMig* m = FromGi(gi);
  if (Return r = CheckInstance(m); r != kSuccess) return r;
  if (m->has_ci || HasProcess(m->device.gpu_instance_id)) return kErrorInUse;
  *m = FakeMig{};
  return kSuccess;
}

Return nvmlGpuInstanceGetComputeInstanceProfileInfo(GpuInstance gi, unsigned int profile,
                                                    unsigned int engine,
                                                    ComputeInstanceProfileInfo* info) {
  FakeMig* m = FromGi(gi);
  if (Return r = CheckInstance(m); r != kSuccess) return r;
  if (info == nullptr || engine != kComputeInstanceEngineProfileShared)
    return kErrorInvalidArgument;
  const GiProfile* p = GiProfileById(m->profile_id);
  if (profile >= std::size(kCiSlices))
    return profile < kComputeInstanceProfileIndexLimit ? kErrorNotSupported : kErrorInvalidArgument;
  if (kCiSlices[profile] > p->slices) return kErrorNotSupported;
  *info = ComputeInstanceProfileInfo{};
  info->id = profile;
  info->sliceCount = kCiSlices[profile];
  info->instanceCount = p->slices / kCiSlices[profile];
  info->multiprocessorCount = p->sms * kCiSlices[profile] / p->slices;
  return kSuccess;
}

Return nvmlGpuInstanceCreateComputeInstance(GpuInstance gi, unsigned int profile_id,
                                            ComputeInstance* out) {
  FakeMig* m = FromGi(gi);
  if (Return r = CheckInstance(m); r != kSuccess) return r;
  if (out == nullptr || profile_id >= std::size(kCiSlices)) return kErrorInvalidArgument;
  // The fake models one compute instance over the whole GPU instance.
  if (m->has_ci || kCiSlices[profile_id] != GiProfileById(m->profile_id)->slices)
    return kErrorInsufficientResources;
  if (g_state.failing_ci_creates > 0) {
    --g_state.failing_ci_creates;
    return kErrorUnknown;
  }
  m->has_ci = true;
  *out = ToCi(m);
  return kSuccess;
}

Return nvmlGpuInstanceGetComputeInstances(GpuInstance gi, unsigned int profile_id,
                                          ComputeInstance* out, unsigned int* count) {
  FakeMig* m = FromGi(gi);
  if (Return r = CheckInstance(m); r != kSuccess) return r;
  if (out == nullptr || count == nullptr || profile_id >= std::size(kCiSlices))
    return kErrorInvalidArgument;
  *count = 0;
  if (m->has_ci && kCiSlices[profile_id] == GiProfileById(m->profile_id)->slices) {
    out[0] = ToCi(m);
    *count = 1;
  }
  return kSuccess;
}

Return nvmlComputeInstanceDestroy(ComputeInstance ci) {
  FakeMig* m = FromCi(ci);
  if (Return r = CheckInstance(m); r != kSuccess) return r;
  if (!m->has_ci) return kErrorInvalidArgument;
  if (HasProcess(m->device.gpu_instance_id)) return kErrorInUse;
  m->has_ci = false;
  return kSuccess;
}

}  // extern "C"

// The fake's entry points must have exactly the signatures NvmlBackend declares.
static_assert(std::is_same_v<decltype(&nvmlDeviceGetGpuInstanceProfileInfoV), GetGiProfileInfoFn>);
static_assert(
    std::is_same_v<decltype(&nvmlDeviceGetGpuInstancePossiblePlacements_v2), GetGiPlacementsFn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceCreateGpuInstanceWithPlacement), CreateGiFn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetGpuInstanceById), GiByIdFn>);
static_assert(std::is_same_v<decltype(&nvmlGpuInstanceGetInfo), GiInfoFn>);
static_assert(std::is_same_v<decltype(&nvmlGpuInstanceDestroy), GiDestroyFn>);
static_assert(
    std::is_same_v<decltype(&nvmlGpuInstanceGetComputeInstanceProfileInfo), CiProfileInfoFn>);
static_assert(std::is_same_v<decltype(&nvmlGpuInstanceCreateComputeInstance), CreateCiFn>);
static_assert(std::is_same_v<decltype(&nvmlGpuInstanceGetComputeInstances), GetCisFn>);
static_assert(std::is_same_v<decltype(&nvmlComputeInstanceDestroy), CiDestroyFn>);
