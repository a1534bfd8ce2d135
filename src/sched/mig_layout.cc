#include "sched/mig_layout.h"

#include <algorithm>
#include <limits>
#include <set>
#include <tuple>
#include <utility>

namespace pinpoint::sched::mig {

namespace {

constexpr uint64_t kGB = 1'000'000'000;

Profile P(const char* name, int compute, uint64_t gb, int size, std::vector<int> starts) {
  return Profile{name, compute, gb * kGB, size, std::move(starts)};
}

// The A100 and H100 families share one placement grid: 8 memory slices, 7 compute slices.
Model Ga100Grid(const char* name, uint64_t gb_per_slice) {
  uint64_t g = gb_per_slice;
  auto label = [](int c, uint64_t gb) {
    return std::to_string(c) + "g." + std::to_string(gb) + "gb";
  };
  Model m{name, 8, {}};
  m.profiles = {P(label(1, g).c_str(), 1, g, 1, {0, 1, 2, 3, 4, 5, 6}),
                P(label(1, 2 * g).c_str(), 1, 2 * g, 2, {0, 2, 4, 6}),
                P(label(2, 2 * g).c_str(), 2, 2 * g, 2, {0, 2, 4}),
                P(label(3, 4 * g).c_str(), 3, 4 * g, 4, {0, 4}),
                P(label(4, 4 * g).c_str(), 4, 4 * g, 4, {0}),
                P(label(7, 8 * g).c_str(), 7, 8 * g, 8, {0})};
  return m;
}

// What one GPU's memory slices hold during planning: the instance (or planned creation) on each.
struct GpuState {
  const Gpu* gpu;
  std::vector<int> owner;     // per memory slice: index into instances, kPlanned, or kFree
  std::vector<bool> claimed;  // per instance: serves a want of this plan, or is being destroyed
  int taken = 0;              // memory slices held
};
constexpr int kFree = -1;
constexpr int kPlanned = -2;

GpuState StateOf(const Gpu& gpu) {
  GpuState s{&gpu, std::vector<int>(static_cast<size_t>(gpu.model.memory_slices), kFree),
             std::vector<bool>(gpu.instances.size(), false), 0};
  for (size_t i = 0; i < gpu.instances.size(); ++i) {
    const Instance& in = gpu.instances[i];
    partition::SliceRange slices = gpu.model.SlicesAt(in.profile, in.start);
    for (int k = slices.begin; k < slices.end && k < gpu.model.memory_slices; ++k) {
      if (k < 0) continue;
      s.owner[static_cast<size_t>(k)] = static_cast<int>(i);
      ++s.taken;
    }
  }
  return s;
}

bool Fits(const Profile& p, int start, const GpuState& s) {
  return start + p.size <= static_cast<int>(s.owner.size());
}

bool FreeAt(const Profile& p, int start, const GpuState& s) {
  if (!Fits(p, start, s)) return false;
  for (int k = start; k < start + p.size; ++k)
    if (s.owner[static_cast<size_t>(k)] != kFree) return false;
  return true;
}

void Take(const Profile& p, int start, GpuState& s) {
  for (int k = start; k < start + p.size; ++k) {
    if (s.owner[static_cast<size_t>(k)] == kFree) ++s.taken;
    s.owner[static_cast<size_t>(k)] = kPlanned;
  }
}

bool Reclaimable(const Instance& in, int64_t now_ms, const Options& o) {
  return in.jobs == 0 && !in.kept && now_ms - in.created_ms >= o.min_lifetime_ms &&
         now_ms - in.idle_since_ms >= o.min_idle_ms;
}

// GPUs in packing order: the most memory slices taken first, then the lowest index.
std::vector<GpuState*> PackingOrder(std::vector<GpuState>& states) {
  std::vector<GpuState*> order;
  for (GpuState& s : states) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [](const GpuState* a, const GpuState* b) {
    if (a->taken != b->taken) return a->taken > b->taken;
    return a->gpu->index < b->gpu->index;
  });
  return order;
}

// Instance `i` of `s` destroyed by `plan`: its slices free, and it serves no one.
void Free(GpuState& s, size_t i, Plan& plan) {
  s.claimed[i] = true;
  plan.destroys.push_back({s.gpu->index, s.gpu->instances[i].id});
  for (int& owner : s.owner) {
    if (owner == static_cast<int>(i)) {
      owner = kFree;
      --s.taken;
    }
  }
}

// The memory slices instance `i` of `s` covers.
partition::SliceRange SlicesOf(const GpuState& s, size_t i) {
  const Instance& in = s.gpu->instances[i];
  return s.gpu->model.SlicesAt(in.profile, in.start);
}

// Whether `slices` on `s`'s GPU overlap the plan's drain.
bool InDrain(const std::optional<Drain>& drain, const GpuState& s, partition::SliceRange slices) {
  if (!drain || drain->gpu != s.gpu->index) return false;
  return slices.Overlaps(s.gpu->model.SlicesAt(drain->profile, drain->start));
}

// Whether instance `i` of `s` lies (partly) in the plan's drain.
bool InDrain(const std::optional<Drain>& drain, const GpuState& s, size_t i) {
  return InDrain(drain, s, SlicesOf(s, i));
}

// The placement to drain for `want` and the GPU it is on; a null GPU when every placement of its
// profile holds a creation of this plan.
std::pair<GpuState*, Drain> ChooseDrain(std::vector<GpuState>& states, const Want& want) {
  std::pair<GpuState*, Drain> best{nullptr, {}};
  std::tuple<int, int, int, int> best_key{std::numeric_limits<int>::max(), 0, 0, 0};
  for (GpuState& s : states) {
    const Profile* p = s.gpu->model.ServingProfile(want);
    if (p == nullptr) continue;
    for (int start : p->starts) {
      if (!Fits(*p, start, s)) continue;
      int busy = 0;
      bool planned = false;
      for (int k = start; k < start + p->size; ++k) {
        int owner = s.owner[static_cast<size_t>(k)];
        if (owner == kPlanned || (owner >= 0 && s.gpu->instances[static_cast<size_t>(owner)].kept))
          planned = true;  // not this placement
        if (owner >= 0 && (s.gpu->instances[static_cast<size_t>(owner)].jobs > 0 ||
                           s.claimed[static_cast<size_t>(owner)]))
          ++busy;
      }
      if (planned) continue;
      std::tuple<int, int, int, int> key{busy, s.taken, s.gpu->index, start};
      if (key < best_key) best_key = key, best = {&s, Drain{s.gpu->index, p->name, start, want.id}};
    }
  }
  return best;
}

}  // namespace

bool Profile::Serves(const Want& want) const {
  return want.profile.empty() ? mem_bytes >= want.gpu_mem_bytes : want.profile == name;
}

bool Profile::SmallerThan(const Profile& other) const {
  return std::tie(mem_bytes, compute_slices) < std::tie(other.mem_bytes, other.compute_slices);
}

const Profile* Model::ServingProfile(const Want& want) const {
  if (!want.profile.empty()) return Find(want.profile);
  const Profile* best = nullptr;
  for (const Profile& p : profiles)
    if (p.Serves(want) && (best == nullptr || p.SmallerThan(*best))) best = &p;
  return best;
}

const Profile* Model::Find(const std::string& profile) const {
  for (const Profile& p : profiles)
    if (p.name == profile) return &p;
  return nullptr;
}

partition::SliceRange Model::SlicesAt(const std::string& profile, int start) const {
  const Profile* p = Find(profile);
  return {start, start + (p != nullptr ? p->size : 1)};
}

Model A100_40GB() { return Ga100Grid("A100-SXM4-40GB", 5); }
Model A100_80GB() { return Ga100Grid("A100-SXM4-80GB", 10); }
Model H100_80GB() { return Ga100Grid("H100-SXM5-80GB", 10); }

namespace {

// The steps of PlanLayout, each for one want: true when it served the want (its choice is in
// `plan` and `states`).

// 1. An idle instance of its profile.
bool ServeByIdleOfItsProfile(const Want& want, std::vector<GpuState>& states, Plan& plan) {
  for (GpuState& s : states) {
    const Profile* p = s.gpu->model.ServingProfile(want);
    for (size_t i = 0; p != nullptr && i < s.gpu->instances.size(); ++i) {
      const Instance& in = s.gpu->instances[i];
      if (s.claimed[i] || in.jobs > 0 || in.profile != p->name) continue;
      if (InDrain(plan.drain, s, i)) continue;
      s.claimed[i] = true;
      plan.existing.emplace_back(want.id, in.id);
      return true;
    }
  }
  return false;
}

// 2. A new instance where its placement is free, packed.
bool ServeByNewInstance(const Want& want, std::vector<GpuState>& states, Plan& plan) {
  for (GpuState* s : PackingOrder(states)) {
    const Profile* p = s->gpu->model.ServingProfile(want);
    if (p == nullptr) continue;
    for (int start : p->starts) {
      if (!FreeAt(*p, start, *s) ||
          InDrain(plan.drain, *s, partition::SliceRange{start, start + p->size}))
        continue;
      Take(*p, start, *s);
      plan.creates.push_back({s->gpu->index, p->name, start, want.id});
      return true;
    }
  }
  return false;
}

// 3. An idle instance of a larger profile: the smallest (fewest compute slices among equals).
bool ServeByIdleLarger(const Want& want, std::vector<GpuState>& states, Plan& plan) {
  if (!want.profile.empty()) return false;
  GpuState* best_state = nullptr;
  size_t best = 0;
  const Profile* best_profile = nullptr;
  for (GpuState& s : states) {
    for (size_t i = 0; i < s.gpu->instances.size(); ++i) {
      const Instance& in = s.gpu->instances[i];
      const Profile* p = s.gpu->model.Find(in.profile);
      if (s.claimed[i] || in.jobs > 0 || p == nullptr || !p->Serves(want)) continue;
      if (InDrain(plan.drain, s, i)) continue;
      if (best_profile == nullptr || p->SmallerThan(*best_profile))
        best_state = &s, best = i, best_profile = p;
    }
  }
  if (best_state == nullptr) return false;
  best_state->claimed[best] = true;
  plan.existing.emplace_back(want.id, best_state->gpu->instances[best].id);
  return true;
}

// A placement for a want made of free slices and idle instances past both minimums.
struct Room {
  GpuState* state = nullptr;
  const Profile* profile = nullptr;
  int start = 0;
  int cost = std::numeric_limits<int>::max();
  std::set<int> victims;
};

// The instances a placement at `start` would free, or nullopt when one of them may not go.
std::optional<std::set<int>> VictimsAt(const Profile& p, int start, const GpuState& s,
                                       int64_t now_ms, const Options& options) {
  std::set<int> victims;
  for (int k = start; k < start + p.size; ++k) {
    int owner = s.owner[static_cast<size_t>(k)];
    if (owner == kFree) continue;
    if (owner == kPlanned || s.claimed[static_cast<size_t>(owner)] ||
        !Reclaimable(s.gpu->instances[static_cast<size_t>(owner)], now_ms, options))
      return std::nullopt;
    victims.insert(owner);
  }
  return victims;
}

// 4. The room of idle instances past both minimums: the placement freeing the fewest slices.
Room FindRoom(const Want& want, std::vector<GpuState>& states, const Plan& plan, int64_t now_ms,
              const Options& options) {
  Room room;
  for (GpuState* s : PackingOrder(states)) {
    const Profile* p = s->gpu->model.ServingProfile(want);
    if (p == nullptr) continue;
    for (int start : p->starts) {
      if (!Fits(*p, start, *s) ||
          InDrain(plan.drain, *s, partition::SliceRange{start, start + p->size}))
        continue;
      std::optional<std::set<int>> victims = VictimsAt(*p, start, *s, now_ms, options);
      if (!victims) continue;
      int cost = 0;
      for (int v : *victims) {
        const Profile* vp = s->gpu->model.Find(s->gpu->instances[static_cast<size_t>(v)].profile);
        cost += vp != nullptr ? vp->size : 1;
      }
      if (cost < room.cost) room = Room{s, p, start, cost, *victims};
    }
  }
  return room;
}

// 5. Drain a placement for it: its idle instances past both minimums go now, the busy ones as
// their jobs end; no later want takes it. True when the drain emptied it at once and the want
// was served there.
bool ServeByDrain(const Want& want, std::vector<GpuState>& states, Plan& plan, int64_t now_ms,
                  const Options& options) {
  auto [drained, drain] = ChooseDrain(states, want);
  if (drained == nullptr) return false;
  plan.drain = drain;
  GpuState& s = *drained;
  const Profile* p = s.gpu->model.Find(drain.profile);
  for (size_t i = 0; i < s.gpu->instances.size(); ++i)
    if (!s.claimed[i] && Reclaimable(s.gpu->instances[i], now_ms, options) &&
        InDrain(plan.drain, s, i))
      Free(s, i, plan);
  if (!FreeAt(*p, plan.drain->start, s)) return false;
  Take(*p, plan.drain->start, s);  // emptied now: made at once
  plan.creates.push_back({s.gpu->index, p->name, plan.drain->start, want.id});
  plan.drain.reset();
  return true;
}

}  // namespace

Plan PlanLayout(const std::vector<Gpu>& gpus, const std::vector<Want>& queue, int64_t now_ms,
                const Options& options) {
  Plan plan;
  std::vector<GpuState> states;
  for (const Gpu& g : gpus) states.push_back(StateOf(g));

  for (const Want& want : queue) {
    if (ServeByIdleOfItsProfile(want, states, plan) || ServeByNewInstance(want, states, plan) ||
        ServeByIdleLarger(want, states, plan))
      continue;
    Room room = FindRoom(want, states, plan, now_ms, options);
    if (room.state == nullptr && !plan.drain && ServeByDrain(want, states, plan, now_ms, options))
      continue;
    if (room.state == nullptr) {
      plan.unserved.push_back(want.id);
      continue;
    }
    GpuState& s = *room.state;
    for (int v : room.victims) Free(s, static_cast<size_t>(v), plan);
    Take(*room.profile, room.start, s);
    plan.creates.push_back({s.gpu->index, room.profile->name, room.start, want.id});
  }
  return plan;
}

}  // namespace pinpoint::sched::mig
