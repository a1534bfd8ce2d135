// How pinpointd runs MPS on this node, decided once at start (pure): real control daemons, or
// none; and, with none, whether slices on `mps` devices run without enforced limits or are
// refused. docs/mps.md ("Which implementation") is the table for people.
#pragma once

#include <string>

#include "daemon/setup/config.h"
#include "gpu/gpu_backend.h"
#include "mps/mps_backend.h"
#include "pinpoint/status.h"
#include "sharing/placement_rules.h"

namespace pinpoint::daemon {

// What the decision depends on besides the configuration; gathered by the caller.
struct MpsFacts {
  gpu::GpuBackend::Source source = gpu::GpuBackend::Source::kNvml;  // what decides
  std::string backend_kind;      // "nvml" | "simulated:<preset>": for people
  std::string control_unusable;  // mps::MpsDaemons::Unusable(mps_control): "" when it can run
};

struct MpsPlan {
  bool daemons = false;  // run MpsDaemons; otherwise EnvOnlyMps
  // Slices on `mps` devices are refused (submit errors, pending ones wait): MPS cannot be
  // started on this GPU node and the configuration did not opt out. Whole-GPU jobs still run.
  bool refuse_slices = false;
  std::string why_not;  // why no daemons run, one phrase; "" when daemons is true
};

// The policy:
//  - mps: env-only                  no daemons; slices run unenforced, as configured.
//  - a simulated node               no daemons; slices run (their GPUs are made up anyway);
//                                   mps: daemons there is an error.
//  - NVML node, control binary runs daemons.
//  - NVML node, it cannot run:      mps: daemons is an error; mps: auto refuses slices, unless
//                                   allow_unenforced_slices, which runs them unenforced.
// Errors: kFailedPrecondition "mps: daemons, but <why>".
Result<MpsPlan> PlanMps(const Config& config, const MpsFacts& facts);

// The sentence a user gets for a slice refused under `plan.refuse_slices`.
std::string NoMpsSlicesReason(const MpsPlan& plan);

// The placements of the MPS backend under `plan`: config.mps_client_limit clients a device; with
// a plan that refuses slices, none, saying why (NoMpsSlicesReason).
sharing::PlacementRules MpsRulesOf(const Config& config, const MpsPlan& plan);

}  // namespace pinpoint::daemon
