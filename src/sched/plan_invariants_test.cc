// Property tests: random but seeded queues on random nodes, run through many passes, must always
// give plans that respect every capacity rule, honour the reservation, and do not depend on the
// order of the pending list or on the per-shape cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "sched/placement.h"
#include "sched/sched_test_util.h"

namespace pinpoint::sched {
namespace {

using namespace ::pinpoint::sched::testing;  // NOLINT(google-build-using-namespace)

int Pick(std::mt19937& rng, int lo, int hi) {  // inclusive; portable unlike <random> distributions
  return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1));
}

Inventory RandomNode(std::mt19937& rng) {
  std::vector<Device> devices;
  int count = Pick(rng, 3, 10);
  for (int i = 0; i < count; ++i) {
    auto mode = static_cast<SharingMode>(Pick(rng, 0, 5) % 3 == 0 ? Pick(rng, 0, 2) : 2);
    Device d = Pick(rng, 0, 4) == 0 ? Mig(0, uint64_t{10} * Pick(rng, 1, 4), mode) : Gpu(80, mode);
    if (Pick(rng, 0, 9) == 0) {
      d.drained = true;
    }
    devices.push_back(d);
  }
  Inventory inv = Node(devices, Pick(rng, 8, 64), 1024);
  SetMpsRules(&inv, Pick(rng, 2, 6));
  return inv;
}

Demand RandomDemand(std::mt19937& rng, JobId id) {
  Demand d;
  switch (Pick(rng, 0, 5)) {
    case 0:
      d = CpuOnly(id, 1);
      break;
    case 1:
      d = Whole(id, Pick(rng, 1, 3));
      break;
    default:
      d = Slice(id, 0, Pick(rng, 1, 40), Pick(rng, 0, 3) * 10, Pick(rng, 0, 4) == 0 ? 2 : 1);
  }
  d.uid = 1000 + Pick(rng, 0, 2);
  d.cpus = Pick(rng, 1, 8);
  d.mem_bytes = Pick(rng, 0, 8) * kGiB;
  d.priority = Pick(rng, 0, 3) == 0 ? 1 : 0;
  return d;
}

const Demand& Find(const Snapshot& s, JobId id) {
  return *std::find_if(s.pending.begin(), s.pending.end(),
                       [&](const Demand& d) { return d.id == id; });
}

// Checks every rule on the node after all starts are applied. Running jobs are valid on entry.
void CheckCapacity(const Snapshot& s, const Plan& plan) {
  const auto& devs = s.inventory.devices;
  struct Use {
    uint64_t mem = 0;
    int share = 0;
    int jobs = 0;
    bool whole = false;
    std::set<uint32_t> uids;
  };
  std::vector<Use> use(devs.size());
  int64_t cpus = 0;
  auto add = [&](uint32_t uid, int job_cpus, const std::vector<Slot>& slots) {
    cpus += job_cpus;
    for (const Slot& slot : slots) {
      Use& u = use[slot.device_index];
      u.mem += slot.gpu_mem_bytes;
      u.share += slot.gpu_share_pct;
      u.whole |= slot.gpu_mem_bytes == 0;
      ++u.jobs;
      u.uids.insert(uid);
    }
  };
  for (const RunningJob& r : s.running) {
    add(r.uid, r.cpus, r.slots);
  }
  for (const Start& st : plan.starts) {
    const Demand& d = Find(s, st.id);
    ASSERT_EQ(static_cast<int>(st.slots.size()), d.gpus) << "job " << d.id;
    std::set<int> distinct;
    for (const Slot& slot : st.slots) {
      distinct.insert(slot.device_index);
      EXPECT_FALSE(devs[slot.device_index].drained) << "job " << d.id;
      EXPECT_EQ(slot.gpu_mem_bytes, d.gpu_mem_bytes) << "job " << d.id;
      if (d.gpu_mem_bytes == 0) {
        EXPECT_FALSE(devs[slot.device_index].partition.is_mig()) << "job " << d.id;
      }
    }
    EXPECT_EQ(distinct.size(), st.slots.size()) << "job " << d.id;
    add(d.uid, d.cpus, st.slots);
  }
  EXPECT_LE(cpus, s.inventory.host.cpus);
  for (size_t i = 0; i < devs.size(); ++i) {
    const Use& u = use[i];
    SCOPED_TRACE("device " + std::to_string(i));
    EXPECT_LE(u.mem, devs[i].mem_bytes);
    EXPECT_LE(u.share, 100);
    if (u.whole || devs[i].mode == SharingMode::kExclusive) {
      EXPECT_LE(u.jobs, 1);
    }
    if (devs[i].mode == SharingMode::kMps) {
      EXPECT_LE(u.jobs, devs[i].rules.max_jobs);
      EXPECT_LE(u.uids.size(), 1u);
    }
  }
}

// Jobs after the reserving one never touch its devices, nor take the host resources it holds.
void CheckReservation(const Snapshot& s, const Plan& plan) {
  if (!plan.reservation) {
    return;
  }
  const Reservation& r = *plan.reservation;
  const Demand& holder = Find(s, r.id);
  auto after = [&](const Demand& d) {
    return d.priority < holder.priority || (d.priority == holder.priority && d.id > holder.id);
  };
  int64_t free_cpus = s.inventory.host.cpus;
  for (const RunningJob& job : s.running) {
    free_cpus -= job.cpus;
  }
  int64_t later_cpus = 0;
  for (const Start& st : plan.starts) {
    const Demand& d = Find(s, st.id);
    if (!after(d)) {
      free_cpus -= d.cpus;
      continue;
    }
    later_cpus += d.cpus;
    for (const Slot& slot : st.slots) {
      EXPECT_EQ(std::count(r.device_indices.begin(), r.device_indices.end(), slot.device_index), 0)
          << "job " << d.id << " backfilled onto a device held for job " << r.id;
    }
  }
  EXPECT_LE(later_cpus, std::max<int64_t>(0, free_cpus - r.cpus));
}

void CheckAccounted(const Snapshot& s, const Plan& plan) {
  std::multiset<JobId> seen;
  for (const Start& st : plan.starts) {
    seen.insert(st.id);
  }
  for (const Wait& w : plan.waits) {
    seen.insert(w.id);
    EXPECT_TRUE(w.reason == Reason::kResources || w.reason == Reason::kMpsUser ||
                w.reason == Reason::kHostResources || w.reason == Reason::kReservation)
        << ReasonName(w.reason);
    EXPECT_FALSE(w.detail.empty()) << "job " << w.id;
  }
  std::multiset<JobId> want;
  for (const Demand& d : s.pending) {
    want.insert(d.id);
  }
  EXPECT_EQ(seen, want);
}

// Same snapshot with every demand's host memory nudged by a few bytes: no two demands share a
// shape, so the per-shape cache never answers. The plan must not change.
Snapshot WithUniqueShapes(Snapshot s) {
  for (Demand& d : s.pending) {
    d.mem_bytes += 1 + static_cast<uint64_t>(d.id);
  }
  return s;
}

void Apply(const Plan& plan, Snapshot* s, std::mt19937& rng) {
  for (const Start& st : plan.starts) {
    const Demand& d = Find(*s, st.id);
    s->running.push_back({d.id, d.uid, d.cpus, d.mem_bytes, st.slots});
  }
  for (const Start& st : plan.starts) {
    std::erase_if(s->pending, [&](const Demand& d) { return d.id == st.id; });
  }
  std::erase_if(s->running, [&](const RunningJob&) { return Pick(rng, 0, 3) == 0; });
}

TEST(PlanInvariantsTest, RandomQueuesOverManyPasses) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    Snapshot s{RandomNode(rng), {}, {}};
    JobId next_id = 1;
    for (int pass = 0; pass < 25; ++pass) {
      SCOPED_TRACE("pass " + std::to_string(pass));
      int arrivals = Pick(rng, 0, 12);
      for (int k = 0; k < arrivals; ++k) {
        s.pending.push_back(RandomDemand(rng, next_id++));
      }
      Plan plan = Schedule(s);
      CheckAccounted(s, plan);
      CheckCapacity(s, plan);
      CheckReservation(s, plan);

      Snapshot shuffled = s;
      std::shuffle(shuffled.pending.begin(), shuffled.pending.end(), rng);
      Plan again = Schedule(shuffled);
      EXPECT_EQ(Summary(again), Summary(plan));
      EXPECT_EQ(Details(again), Details(plan));

      Plan uncached = Schedule(WithUniqueShapes(s));
      EXPECT_EQ(Summary(uncached), Summary(plan));
      EXPECT_EQ(Details(uncached), Details(plan));
      if (::testing::Test::HasFailure()) {
        return;
      }
      Apply(plan, &s, rng);
    }
  }
}

}  // namespace
}  // namespace pinpoint::sched
