// The MIG layout planner (issue 26, docs/scheduling.md "Dynamic MIG"): pure. From the GPUs in
// `mig-dynamic` mode (their profiles and placement rules, the instances they have and whether
// jobs run there) and the queue of slices waiting for one, it decides which GPU instances to
// create (profile and placement) and which idle ones to destroy. It never touches an instance a
// job runs on; it destroys only what a waiting job needs the room of, and only an instance idle
// for min_idle_ms and alive for min_lifetime_ms (no thrashing); a job it cannot serve is left to
// the existing instances or a whole GPU (the scheduler's). No I/O, no clock: `now_ms` is given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partition/partition.h"
#include "pinpoint/job.h"

namespace pinpoint::sched::mig {

// A slice waiting for an instance: the device memory an instance must have for it (what it
// asked for and the reserve, partition::MemoryReserve::Needed), or the profile the user named
// (--mig).
struct Want {
  JobId id = 0;
  uint64_t gpu_mem_bytes = 0;
  std::string profile = "";  // "" : the smallest profile with the memory
};

// One GPU instance profile as NVML lists it: its name, its memory, and where it may be placed
// (the first memory slice of each possible placement, and how many slices it covers).
struct Profile {
  std::string name;        // "1g.10gb"
  int compute_slices = 1;  // the "1g"
  uint64_t mem_bytes = 0;
  int size = 1;                  // memory slices one instance covers
  std::vector<int> starts = {};  // NVML's possible placements, ascending

  // Whether an instance of this profile serves `want`: the profile it names, else any with its
  // memory.
  bool Serves(const Want& want) const;
  // The order in which a want that names no profile takes profiles that serve it: less memory
  // first, then fewer compute slices.
  bool SmallerThan(const Profile& other) const;
};

// A GPU model's MIG profiles. The named tables hold NVIDIA's published profiles and placements
// (MIG user guide, "Supported MIG Profiles"), memory as the profile's name gives it (10gb: 10^10
// bytes); on a real GPU the backend reads the same from NVML instead.
struct Model {
  std::string name;
  int memory_slices = 8;
  std::vector<Profile> profiles = {};
  const Profile* Find(const std::string& profile) const;
  // The profile a new instance for `want` gets: the one it names, else the smallest that serves
  // it (Profile::SmallerThan). Null when none.
  const Profile* ServingProfile(const Want& want) const;
  // The slices an instance of `profile` at `start` covers: one slice for a profile the model
  // does not list (an instance that exists still holds its start).
  partition::SliceRange SlicesAt(const std::string& profile, int start) const;
};
Model A100_40GB();
Model A100_80GB();
Model H100_80GB();

// A GPU instance that exists.
struct Instance {
  int id = 0;  // the GPU instance id NVML gave it
  std::string profile;
  int start = 0;  // its placement's first memory slice
  int jobs = 0;   // running on it; > 0: never destroyed
  int64_t created_ms = 0;
  int64_t idle_since_ms = 0;  // when its last job left (its creation when it never had one)
  // A suspended job resumes on it (docs/scheduling.md "Suspend"): never destroyed, and never in a
  // drain, which would wait for that job forever and hold its resume off.
  bool kept = false;
};

struct Gpu {
  int index = 0;
  Model model;
  std::vector<Instance> instances = {};
};

struct Options {
  int64_t min_idle_ms = 60'000;       // an instance idle for less is never destroyed
  int64_t min_lifetime_ms = 300'000;  // nor one created less long ago
};

struct Create {
  int gpu = 0;
  std::string profile;
  int start = 0;
  JobId for_job = 0;
};
struct Destroy {
  int gpu = 0;
  int instance_id = 0;
};
// A placement held back for the first want no instance serves (a whole-GPU 7g.80gb behind busy
// small instances): later wants of the plan neither get an instance there nor a new one, so it
// empties as its jobs end, and its idle instances past both minimums are destroyed.
struct Drain {
  int gpu = 0;
  std::string profile;
  int start = 0;
  JobId for_job = 0;
};
struct Plan {
  std::vector<Destroy> destroys;                // first, in this order
  std::vector<Create> creates;                  // then these
  std::vector<std::pair<JobId, int>> existing;  // job -> id of an idle instance that serves it
  std::vector<JobId> unserved;  // no instance now and none may be made; in queue order
  std::optional<Drain> drain = std::nullopt;  // at most one
};

// Each want, in queue order, gets: an idle instance of its profile; else a new instance where the
// profile's placement is free (on the GPU with the most memory slices already taken, lowest start
// first: packing leaves whole GPUs and large placements free); else an idle instance of a larger
// profile (the smallest, fewest compute slices among equals); else a new instance in the room of
// idle instances past both minimums (the placement destroying the fewest memory slices); else it is
// unserved. A want larger than every profile, or naming one the model lacks, is unserved. The first
// unserved want whose profile has a placement not already planned for drains one (Drain): the
// placement where the fewest memory slices are busy (jobs run there, or an earlier want took its
// instance), then the fewest taken, the lowest GPU and start first; the plan recomputes it each
// time, so it holds while the want waits.
Plan PlanLayout(const std::vector<Gpu>& gpus, const std::vector<Want>& queue, int64_t now_ms,
                const Options& options = Options());

}  // namespace pinpoint::sched::mig
