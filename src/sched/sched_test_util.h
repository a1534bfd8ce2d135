// Test helpers for sched/: short builders for inventories, running jobs and demands, and a
// one-line summary of a plan that table-driven tests compare against.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mps/mps_backend.h"
#include "sched/inventory.h"
#include "sched/placement.h"
#include "sharing/exclusive.h"
#include "sharing/timeslice.h"

namespace pinpoint::sched::testing {

constexpr uint64_t kGiB = uint64_t{1} << 30;

// The rules the daemon's backends give a device of `mode` (daemon/setup/sharing_setup.cc), MPS with
// `mps_client_limit` clients.
inline sharing::PlacementRules RulesOf(SharingMode mode, int mps_client_limit = 48) {
  switch (mode) {
    case SharingMode::kExclusive:
      return sharing::ExclusiveRules();
    case SharingMode::kTimeslice:
      return sharing::TimesliceRules();
    case SharingMode::kMps:
      break;
  }
  return mps::MpsRules(mps_client_limit);
}

// Every MPS device of `inv` takes `limit` clients (0: none, for `why`).
inline void SetMpsRules(Inventory* inv, int limit, const std::string& why = "") {
  for (Device& d : inv->devices) {
    if (d.mode == SharingMode::kMps) d.rules = mps::MpsRules(limit, why);
  }
}

inline Device Gpu(uint64_t mem_gib, SharingMode mode = SharingMode::kMps) {
  Device d;
  d.mem_bytes = mem_gib * kGiB;
  d.mode = mode;
  d.rules = RulesOf(mode);
  d.name = "GPU";
  return d;
}

inline Device Mig(int gpu_index, uint64_t mem_gib, SharingMode mode = SharingMode::kMps) {
  Device d = Gpu(mem_gib, mode);
  d.partition.kind = partition::Kind::kMigInstance;
  d.gpu_index = gpu_index;
  d.name = "MIG";
  return d;
}

inline Device Drained(Device d) {
  d.drained = true;
  return d;
}

// A node of `devices` (indices and uuids assigned in order) and a roomy host.
inline Inventory Node(std::vector<Device> devices, int cpus = 64, uint64_t mem_gib = 512) {
  Inventory inv;
  for (size_t i = 0; i < devices.size(); ++i) {
    devices[i].index = static_cast<int>(i);
    if (!devices[i].partition.is_mig()) {
      devices[i].gpu_index = static_cast<int>(i);
    }
    devices[i].uuid = (devices[i].partition.is_mig() ? "MIG-" : "GPU-") + std::to_string(i);
  }
  inv.devices = std::move(devices);
  inv.host.cpus = cpus;
  inv.host.mem_bytes = mem_gib * kGiB;
  return inv;
}

// The node with slices placed by `placement` (Node's is the default, kAuto).
inline Inventory Placing(Inventory inv, SlicePlacement placement) {
  inv.slice_placement = placement;
  return inv;
}
inline Inventory Packed(Inventory inv) { return Placing(std::move(inv), SlicePlacement::kPack); }
inline Inventory Spread(Inventory inv) { return Placing(std::move(inv), SlicePlacement::kSpread); }
// The node with `gpus` empty GPUs kept for whole-GPU jobs to come (auto).
inline Inventory KeepEmpty(Inventory inv, int gpus) {
  inv.keep_empty_gpus = gpus;
  return inv;
}
inline Device Busy(Device d, int busy_pct) {
  d.busy_pct = busy_pct;
  return d;
}

inline Slot On(int device, uint64_t mem_gib, int share_pct = 0) {
  return Slot{device, mem_gib * kGiB, share_pct};
}
inline Slot WholeOn(int device) { return Slot{device, 0, 0}; }

inline RunningJob Running(JobId id, uint32_t uid, std::vector<Slot> slots, int cpus = 1,
                          uint64_t mem_gib = 0) {
  return RunningJob{id, uid, cpus, mem_gib * kGiB, std::move(slots)};
}

inline Demand Slice(JobId id, uint32_t uid, uint64_t mem_gib, int share_pct = 0, int gpus = 1) {
  Demand d;
  d.id = id;
  d.uid = uid;
  d.gpus = gpus;
  d.gpu_mem_bytes = mem_gib * kGiB;
  d.gpu_share_pct = share_pct;
  return d;
}

inline Demand Whole(JobId id, int gpus, uint32_t uid = 1000) {
  Demand d;
  d.id = id;
  d.uid = uid;
  d.gpus = gpus;
  return d;
}

inline Demand CpuOnly(JobId id, int cpus, uint64_t mem_gib = 0) {
  Demand d;
  d.id = id;
  d.uid = 1000;
  d.cpus = cpus;
  d.mem_bytes = mem_gib * kGiB;
  return d;
}

inline Demand WithPriority(Demand d, int priority) {
  d.priority = priority;
  return d;
}

// A demand pinned to `devices`, as a batch system's choice.
inline Demand PinnedTo(Demand d, std::vector<int> devices) {
  d.devices = std::move(devices);
  return d;
}

inline Demand Held(Demand d, Hold hold = Hold::kUser) {
  d.hold = hold;
  return d;
}

inline Demand WithHost(Demand d, int cpus, uint64_t mem_gib) {
  d.cpus = cpus;
  d.mem_bytes = mem_gib * kGiB;
  return d;
}

// "1@0 2@0,1 3:resources 4:mps-user": starts in launch order as id@devices, then waits in the
// order considered as id:reason.
inline std::string Summary(const Plan& plan) {
  std::string out;
  auto sep = [&] {
    if (!out.empty()) {
      out += ' ';
    }
  };
  for (const Start& s : plan.starts) {
    sep();
    out += std::to_string(s.id) + "@";
    for (size_t k = 0; k < s.slots.size(); ++k) {
      if (k > 0) {
        out += ',';
      }
      out += std::to_string(s.slots[k].device_index);
    }
  }
  for (const Wait& w : plan.waits) {
    sep();
    out += std::to_string(w.id) + ":" + ReasonName(w.reason);
  }
  return out;
}

// Wait details by job id.
inline std::map<JobId, std::string> Details(const Plan& plan) {
  std::map<JobId, std::string> out;
  for (const Wait& w : plan.waits) {
    out[w.id] = w.detail;
  }
  return out;
}

// Devices held by the plan's reservation, "-" when there is none: "10:0,1".
inline std::string ReservationSummary(const Plan& plan) {
  if (!plan.reservation) {
    return "-";
  }
  std::string out = std::to_string(plan.reservation->id) + ":";
  for (size_t k = 0; k < plan.reservation->device_indices.size(); ++k) {
    if (k > 0) {
      out += ',';
    }
    out += std::to_string(plan.reservation->device_indices[k]);
  }
  return out;
}

// One table row of a plan test: a snapshot and what Schedule must make of it.
struct PlanCase {
  std::string name;
  Snapshot snapshot;
  std::string want;                              // Summary(plan)
  std::string want_reservation = "-";            // ReservationSummary(plan)
  std::map<JobId, std::string> detail_has = {};  // wait detail of a job contains this
};

// Names the case in failure messages instead of dumping its bytes.
inline void PrintTo(const PlanCase& c, std::ostream* os) { *os << c.name; }

// Schedules the case's snapshot and checks the plan against it.
inline void ExpectPlan(const PlanCase& c) {
  Plan plan = Schedule(c.snapshot);
  EXPECT_EQ(Summary(plan), c.want);
  EXPECT_EQ(ReservationSummary(plan), c.want_reservation);
  auto details = Details(plan);
  for (const auto& [id, text] : c.detail_has) {
    EXPECT_THAT(details[id], ::testing::HasSubstr(text)) << "job " << id;
  }
}

}  // namespace pinpoint::sched::testing
