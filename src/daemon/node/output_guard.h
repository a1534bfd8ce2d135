// OutputGuard: pinpointd's look at its running jobs' output on the state directory's disk. It
// measures each running job's output by the blocks it occupies (launch::OutputSpace), decides by
// daemon/jobs/output_bound.h which jobs to end (past max_output_bytes, past their user's
// max_user_output_bytes, or the largest holders when the disk runs short of the store's
// reserve), and cuts each such job's output once it has ended. JobRunner stops the jobs it names.
//
// Cost on the loop: a look comes at most once every NodeOptions::Launch::output_check_ms and
// measures at most kOutputLookJobs jobs (an open of the job directory and of its two files, two
// fstat), the next look resuming after the last one measured; each other running job counts as last
// measured. Nothing is walked: the files are the two the shim made in pinpointd's own directory.
//
// Not thread-safe: the daemon's main loop is its only caller.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "daemon/jobs/job_table.h"
#include "daemon/jobs/output_bound.h"
#include "daemon/node/node_options.h"
#include "launch/output_space.h"

namespace pinpoint::daemon {

inline constexpr size_t kOutputLookJobs = 1024;

class OutputGuard {
 public:
  // Neither is owned; `space` may be null: no look and no cut.
  OutputGuard(const NodeOptions* options, launch::OutputSpace* space)
      : options_(options), space_(space) {}

  // When a look is due at now_ms: measures running jobs' output as above and returns the running
  // jobs to end (each once: a job named stays owed its cut until Ended, and what that cut will
  // free counts as free meanwhile, so that nobody else pays for the same shortfall while it is
  // being stopped). Empty when no look is due, none is set, or nothing is past a bound.
  std::vector<OutputEnd> Look(const JobTable& jobs, int64_t now_ms);
  // Job `id` has ended (its processes are gone): the cut it is owed for its output is asked for
  // (OutputSpace::CutLater: made off the loop). True once nothing is owed or being made (it is
  // forgotten then): the end may be recorded, its output as the record says. False while the cut
  // is being made: ask again at a later pass. A cut that fails is logged.
  bool Ended(JobId id);

 private:
  // Measures up to kOutputLookJobs of `running`, starting after cursor_.
  void Measure(const std::vector<JobId>& running);

  const NodeOptions* options_;
  launch::OutputSpace* space_;
  int64_t next_look_ms_ = 0;
  JobId cursor_ = 0;                    // the last job measured
  std::map<JobId, uint64_t> measured_;  // running jobs: what their output last occupied
  std::map<JobId, OutputEnd> owed_;     // jobs ended for their output: the cut each is owed
  // What the cuts asked for and not yet made will free (each cut's callback takes its share off,
  // on the thread that made it; shared, for a callback that outlives this guard).
  std::shared_ptr<std::atomic<uint64_t>> cutting_bytes_ =
      std::make_shared<std::atomic<uint64_t>>(0);
  // The jobs whose cut is being made: set once it is (by the thread that made it).
  std::map<JobId, std::shared_ptr<std::atomic<bool>>> cutting_;
};

}  // namespace pinpoint::daemon
