// Deferred "wait" replies (the ops "wait", and "submit" with "wait": true): which connection waits
// for which job, and the ids held against the bounds (kWaitMaxHeldIds in all,
// kWaitMaxHeldIdsPerUid for one user other than root, pinpoint/api.h). Bookkeeping only: the
// Service reads the jobs and sends the replies JobEnded hands back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "api/caller.h"
#include "api/server.h"
#include "pinpoint/job.h"
#include "pinpoint/status.h"

namespace pinpoint::daemon {

class WaitBook {
 public:
  // A wait a job's end answers: the wait for that job alone (`ids` empty), or a wait for several
  // whose last job it was (`ids` as they were asked, repeats included).
  struct Answer {
    api::ConnId conn = 0;
    api::Caller caller;
    std::vector<JobId> ids;
  };

  // kUnavailable, with the line for the user, when holding `count` more ids for `caller` would pass
  // a bound.
  Status MayHold(const api::Caller& caller, size_t count) const;
  // `conn` waits for job `id` alone: one id held.
  void WaitFor(api::ConnId conn, const api::Caller& caller, JobId id);
  // `conn` waits until every one of `ids` has ended; `running` are those that have not yet (at
  // least one). Every id asked is held, repeats included.
  void WaitForAll(api::ConnId conn, const api::Caller& caller, std::vector<JobId> ids,
                  const std::set<JobId>& running);
  // The waits job `id`'s end answers, in the order they were made; they are forgotten and their ids
  // given back. Cost: the waits of that job.
  std::vector<Answer> JobEnded(JobId id);
  // Forgets the waits of a connection that closed, and gives their ids back.
  void Closed(api::ConnId conn);
  // Ids held by waits not answered yet, in all.
  size_t held() const { return held_; }

 private:
  struct Waiter {
    api::ConnId conn;
    api::Caller caller;
    uint64_t group = 0;  // 0: a wait for this one job
  };
  // A wait for several jobs: the ids in the order asked, and how many distinct ones have not ended.
  struct Group {
    api::ConnId conn;
    api::Caller caller;
    std::vector<JobId> ids;
    size_t left = 0;
  };
  void Hold(const api::Caller& caller, size_t count);
  void Release(const api::Caller& caller, size_t count);

  std::map<JobId, std::vector<Waiter>> waiters_;  // jobs not yet ended -> who waits for them
  std::map<uint64_t, Group> groups_;
  uint64_t next_group_ = 1;
  size_t held_ = 0;  // ids held, groups' in full
  std::map<uint32_t, size_t> held_by_uid_;
};

}  // namespace pinpoint::daemon
