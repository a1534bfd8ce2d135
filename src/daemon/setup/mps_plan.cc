#include "daemon/setup/mps_plan.h"

namespace pinpoint::daemon {

Result<MpsPlan> PlanMps(const Config& config, const MpsFacts& facts) {
  MpsPlan plan;
  if (config.mps == MpsMode::kEnvOnly) {
    plan.why_not = "mps: env-only in the config";
  } else if (facts.source != gpu::GpuBackend::Source::kNvml) {
    plan.why_not = "no NVIDIA GPU (" + facts.backend_kind + ")";
  } else if (!facts.control_unusable.empty()) {
    plan.why_not = facts.control_unusable;
    plan.refuse_slices = !config.allow_unenforced_slices;
  } else {
    plan.daemons = true;
    return plan;
  }
  if (config.mps == MpsMode::kDaemons)
    return FailedPrecondition("mps: daemons, but " + plan.why_not);
  return plan;
}

std::string NoMpsSlicesReason(const MpsPlan& plan) {
  return "MPS cannot be started on this node (" + plan.why_not +
         "), so a slice's limits would not be enforced; ask for whole GPUs (--gpus N without "
         "--gpu-mem)";
}

sharing::PlacementRules MpsRulesOf(const Config& config, const MpsPlan& plan) {
  if (plan.refuse_slices) return mps::MpsRules(0, NoMpsSlicesReason(plan));
  return mps::MpsRules(config.mps_client_limit);
}

}  // namespace pinpoint::daemon
