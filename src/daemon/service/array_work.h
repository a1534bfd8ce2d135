// Requests on job arrays in progress (Service's cancel, hold, release, update and update_array of
// an array's id): each worked through as much as one request of ids may do at a time
// (kCancelMaxIds jobs, one rewrite budget of kRewriteBytesPerRequest), the first at once, the rest
// from the main loop, so that an array of 10000 tasks never holds the loop for long.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <set>
#include <vector>

#include "api/caller.h"
#include "api/server.h"
#include "daemon/arrays/array_tasks.h"
#include "daemon/node/node.h"
#include "pinpoint/api.h"

namespace pinpoint::daemon {

// Requests on job arrays in progress at once: in all (root keeps a share, common/root_reserve.h)
// and of one user other than root.
inline constexpr size_t kArrayWorkMax = 64;
inline constexpr size_t kArrayWorkMaxPerUid = 4;

// One request's work: its arrays, one result per array after those of its `ids`.
struct ArrayWork {
  api::ConnId conn;
  api::Caller caller;
  ArrayTasks::Change change;
  std::vector<CancelResult> results;  // done so far, in the reply's order
  std::vector<JobId> arrays;
  size_t next = 0;               // arrays[next] is being worked on
  CancelResult current = {};     // its result so far
  bool client_gone = false;      // its connection closed: the work goes on, unanswered
  JobEdit edit = {};             // kUpdate: what every task gets
  std::set<JobId> refused = {};  // tasks of arrays[next] the change refused: not tried again
  Status first_refusal = {};  // the first kFailedPrecondition of them: the answer if none changed
};

// `change` (kCancel, kHold, kRelease, or kUpdate with `edit`) applied to jobs `ids` by `caller`,
// within `budget` bytes of rewrites: one status per id, as the Node's calls answer. With
// `rests_whole` an array's rest among `ids` is changed for all of its tasks (Node::HoldJobs).
std::vector<Status> ApplyChange(Node& node, const api::Caller& caller, ArrayTasks::Change change,
                                const JobEdit& edit, const std::vector<JobId>& ids, uint64_t budget,
                                bool rests_whole = false);

class ArrayWorkQueue {
 public:
  explicit ArrayWorkQueue(Node* node) : node_(node) {}
  // kUnavailable, with the line for the user, when `caller` may not start one more.
  Status MayStart(const api::Caller& caller) const;
  // One budget's worth of `work`; true once every array of it has its result.
  bool Advance(ArrayWork& work);
  // Keeps `work` for the main loop.
  void Queue(ArrayWork work) { queue_.push_back(std::move(work)); }
  // One budget's worth of the oldest work, the others' turn next; the work that completed, to be
  // answered, if it did.
  std::optional<ArrayWork> Continue();
  // The work of a connection that closed goes on, unanswered.
  void Closed(api::ConnId conn);
  bool empty() const { return queue_.empty(); }
  size_t size() const { return queue_.size(); }

 private:
  // The tasks of array `id` the work still has to change (ArrayTasks::For, less those refused);
  // nullopt when `id` names no array.
  std::optional<std::vector<JobId>> TasksLeft(const ArrayWork& work, JobId id) const;
  // `rests_whole`: the ids come from ArrayTasks::For, a rest among them for all of its tasks.
  std::vector<Status> ApplyToTasks(const ArrayWork& work, const std::vector<JobId>& ids,
                                   uint64_t budget, bool rests_whole) {
    return ApplyChange(*node_, work.caller, work.change, work.edit, ids, budget, rests_whole);
  }
  // The answer for an array the request reached no task of.
  Status NoneLeft(const ArrayWork& work, JobId id);

  Node* node_;
  std::deque<ArrayWork> queue_;  // at most kArrayWorkMax, kArrayWorkMaxPerUid of one user
};

}  // namespace pinpoint::daemon
