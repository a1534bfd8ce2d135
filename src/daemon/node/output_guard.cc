#include "daemon/node/output_guard.h"

#include <algorithm>

#include "common/log.h"
#include "daemon/node/occupant.h"
#include "pinpoint/units.h"

namespace pinpoint::daemon {

namespace {

bool Watched(const JobRecord& job) {
  return job.state == JobState::kRunning && job.kind == JobKind::kJob;
}

bool AnyLimit(const OutputLimits& l) {
  return l.job_bytes > 0 || l.user_bytes > 0 || l.reserve_bytes > 0;
}

}  // namespace

void OutputGuard::Measure(const std::vector<JobId>& running) {
  if (running.empty()) return;
  // Round robin over the running jobs in id order: the first after the cursor, wrapping.
  auto start = std::upper_bound(running.begin(), running.end(), cursor_);
  size_t first = static_cast<size_t>(start - running.begin()) % running.size();
  size_t n = std::min(running.size(), kOutputLookJobs);
  for (size_t i = 0; i < n; ++i) {
    JobId id = running[(first + i) % running.size()];
    Result<uint64_t> bytes = space_->OutputBytes(ShimOccupant::JobDir(*options_, id));
    // Not there yet (the shim makes the files as the job starts): nothing held.
    if (bytes.ok() || bytes.status().code() == Code::kNotFound)
      measured_[id] = bytes.ok() ? *bytes : 0;
    else
      log::Warn("job {}: cannot measure its output: {}", id, bytes.status().message());
    cursor_ = id;
  }
}

std::vector<OutputEnd> OutputGuard::Look(const JobTable& jobs, int64_t now_ms) {
  if (space_ == nullptr || !AnyLimit(options_->launch.output) || now_ms < next_look_ms_) return {};
  next_look_ms_ = now_ms + options_->launch.output_check_ms;
  std::vector<JobId> running;  // in id order: the table's
  std::map<JobId, uint64_t> kept;
  for (const auto& [id, job] : jobs) {
    // A job whose cut is being made has ended: what the cut frees is counted apart.
    if (!Watched(job) || cutting_.count(id)) continue;
    running.push_back(id);
    if (auto m = measured_.find(id); m != measured_.end()) kept.insert(*m);
  }
  measured_ = std::move(kept);               // the jobs that ended are forgotten
  std::erase_if(owed_, [&](const auto& o) {  // ended elsewhere than Ended: nothing to cut now
    auto job = jobs.find(o.first);
    return job == jobs.end() || !Watched(job->second);
  });
  Measure(running);
  std::vector<OutputHolder> holders;
  uint64_t owed_bytes = 0;  // what the cuts owed to jobs being stopped will free
  for (const auto& [id, bytes] : measured_) {
    auto owed = owed_.find(id);
    if (owed == owed_.end())
      holders.push_back({id, jobs.at(id).uid, bytes});
    else
      owed_bytes += bytes - std::min(bytes, owed->second.keep_bytes);
  }
  std::optional<launch::DiskSpace> space;
  if (options_->launch.output.reserve_bytes > 0) {
    Result<launch::DiskSpace> s = space_->Space();
    if (s.ok())
      space = *s;
    else
      log::Warn("cannot read the state directory's free space: {}", s.status().message());
    // A job being stopped for its output has been chosen to pay: until it has ended and been
    // cut, nobody else pays for the same shortfall.
    if (space) space->free_bytes += owed_bytes + cutting_bytes_->load();
  }
  std::vector<OutputEnd> ends = DecideOutputEnds(holders, options_->launch.output, space);
  for (const OutputEnd& end : ends) owed_[end.id] = end;
  return ends;
}

bool OutputGuard::Ended(JobId id) {
  if (auto cut = cutting_.find(id); cut != cutting_.end()) {
    if (!cut->second->load()) return false;
    cutting_.erase(cut);
    return true;
  }
  uint64_t held = 0;
  if (auto m = measured_.find(id); m != measured_.end()) held = m->second;
  measured_.erase(id);
  auto owed = owed_.find(id);
  if (owed == owed_.end()) return true;
  OutputEnd end = std::move(owed->second);
  owed_.erase(owed);
  if (space_ == nullptr) return true;
  std::string note = "\npinpoint: output cut at " + FormatSize(end.keep_bytes) + " (" +
                     end.setting + "): the job was ended\n";
  // Made off the loop (launch/output_space.h: the truncate drops the pages the job dirtied); what
  // it will free counts as free until it is made.
  uint64_t freed = held - std::min(held, end.keep_bytes);
  *cutting_bytes_ += freed;
  auto made = std::make_shared<std::atomic<bool>>(false);
  cutting_[id] = made;
  space_->CutLater(ShimOccupant::JobDir(*options_, id), end.keep_bytes, note,
                   [id, freed, cutting = cutting_bytes_, made](const Status& cut) {
                     *cutting -= freed;
                     // A job purged before its cut was made has no output left to cut.
                     if (!cut.ok() && cut.code() != Code::kNotFound)
                       log::Warn("job {}: cannot cut its output: {}", id, cut.message());
                     made->store(true);
                   });
  return Ended(id);  // made at once (a space that cuts on the caller's thread), or not yet
}

}  // namespace pinpoint::daemon
