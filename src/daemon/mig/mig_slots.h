// The slots of a GPU in mig-dynamic mode (issue 26; docs/scheduling.md "Dynamic MIG"): the
// inventory has one device per memory slice a MIG instance of the GPU may start at, in start
// order, so that each device keeps its index while pinpoint makes and destroys the instances
// behind it (a running job holds a device index). A slot is filled by the instance that starts
// at its slice, or is vacant (sched::Device::vacant).
#pragma once

#include <string>
#include <vector>

#include "gpu/gpu_backend.h"
#include "pinpoint/sharing_mode.h"
#include "pinpoint/status.h"
#include "sched/inventory.h"
#include "sched/mig_layout.h"

namespace pinpoint::daemon {

// The planner's model of a GPU from the profiles its driver lists. Profiles without a placement
// and the media-extension ones ("+me", one per GPU, meant for video engines) are left out.
sched::mig::Model MigModelOf(const std::string& gpu_name,
                             const std::vector<gpu::MigProfileInfo>& profiles);

// The slot devices of `gpu`, in start order, as BuildInventory adds them (index, rules and
// drained are the caller's). A filled slot is named "<GPU> MIG <profile>"; a vacant one
// "<GPU> MIG slot <start> (vacant)", with the memory of the largest profile that may start there.
// Device memory is what the instance offers (`reserve.Offered`), as for any device.
// Errors: kInvalidArgument, one line naming the GPU, when an instance starts at no slot of the
// model (NVML gave no placement, or its profile is left out): pinpoint cannot tell which slot
// it fills.
Result<std::vector<sched::Device>> MigSlots(const gpu::GpuInfo& gpu, const sched::mig::Model& model,
                                            SharingMode mode, partition::MemoryReserve reserve);

// Refills the slot devices of GPU `gpu.index` in `inventory` from `gpu`'s instances now: uuid,
// name, memory, SMs and vacancy; index, mode, rules and the rest stay. Errors: MigSlots's.
Status RefillMigSlots(sched::Inventory& inventory, const gpu::GpuInfo& gpu,
                      const sched::mig::Model& model, partition::MemoryReserve reserve);

}  // namespace pinpoint::daemon
