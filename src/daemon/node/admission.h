// Admission: the checks every way into the node takes (submit, a job array, a lease) before
// anything of it is stored, in one place and one order. It reads what it is given (the node's
// options, the user directory, the jobs the node holds) and changes nothing: no store, no clock.
//
//   Prepare    the request alone: env_deny names dropped, the request's own rules, the time limit
//              and the default service class (before an idempotency key is looked at: a retry
//              is compared with the request as it was stored)
//   PrepareEdit, CheckEdit
//              the same rules for a job changed by an update (job_edit.h)
//   Admit      who runs it and whether the node takes it: as_user, priority (a job script's
//              fields with its user's rights, ScriptRights), the daemon's uid,
//              ever fits the node and the user's limit, room for `count` more jobs of the user
//              (max_jobs, max_jobs_per_user) and their bytes (max_request_bytes,
//              max_user_request_bytes)
//
// Not thread-safe (the user directory's cache); the daemon's main loop is its only caller.
#pragma once

#include <string>
#include <vector>

#include "api/caller.h"
#include "common/job_record.h"
#include "daemon/jobs/job_table.h"
#include "daemon/jobs/script_rights.h"
#include "daemon/jobs/users.h"
#include "daemon/node/node_options.h"
#include "pinpoint/api.h"
#include "pinpoint/array_spec.h"
#include "pinpoint/job.h"
#include "pinpoint/status.h"

namespace pinpoint::daemon {

class Admission {
 public:
  // Not owned; each must outlive it. `devices`: the node's devices as they are now (Node's).
  Admission(const NodeOptions* options, const sched::Inventory* devices, UserDirectory* users)
      : options_(options), devices_(devices), users_(users) {}

  // Changes `request` as it will be stored: the environment variables env_deny names are dropped
  // (their names returned, for the job's events), a request without a time limit gets the node's,
  // one without a service class the node's default_qos.
  // Errors: kInvalidArgument (ValidateRequest's), kFailedPrecondition (a time limit above
  // max_time_limit).
  Result<std::vector<std::string>> Prepare(JobRequest& request) const;
  // Prepare's rules for an array of `spec`, and its size. Errors: Prepare's; kInvalidArgument
  // for no task, more than max_array_tasks, or records past kMaxArrayBytes.
  Result<std::vector<std::string>> PrepareArray(JobRequest& request, const ArraySpec& spec) const;

  // The record `caller`'s `request` becomes (uid, gid, user; no id, no state yet), standing for
  // `count` jobs beside `jobs`. The fields `from_script` names came from the job's script and
  // are judged with the rights of the user the job runs as (ScriptRights): as_user, priority,
  // and the caps of max_jobs_per_user (the array) and max_user_request_bytes (the array and the
  // text); their errors name the script's line. Errors: kPermissionDenied (as_user, a priority
  // above what the caller may ask, a non-root daemon asked to run another user's job),
  // kInvalidArgument (an as_user no user has), kFailedPrecondition (never fits the node, or the
  // user's limit), kInvalidArgument / kUnavailable (the byte budgets, CheckRequestBytes),
  // kUnavailable (no room: CheckJobRoom).
  Result<JobRecord> Admit(const api::Caller& caller, JobRequest request, const JobTable& jobs,
                          size_t count = 1, const ScriptOrigins& from_script = {}) const;

  // An update's edit (api.h JobEdit) as it will be applied: a time limit of 0 becomes the node's
  // default, as at submit. Errors: kFailedPrecondition (above max_time_limit).
  Status PrepareEdit(JobEdit& edit) const;
  // A submit's rules for `after`, the job `before` changed by `caller`'s update (job_edit.h): the
  // request's own (a job's: a lease's held at its opening), a signal's time limit, the priority
  // (when it changed), fitting the node and the user's limit (when its devices changed) and the
  // user's bytes. Errors: as Admit's.
  Status CheckEdit(const api::Caller& caller, const JobRecord& before, const JobRecord& after,
                   const JobTable& jobs) const;

  // The user limit of the user named `name` (config user_limits, else its default).
  const sched::UserLimit& UserLimitOf(const std::string& name) const;

  // A time limit as it will be stored (a job's, a lease's): 0 becomes the node's default
  // (default_time_limit, else max_time_limit; 0 when neither is set), and one above
  // max_time_limit is refused, root's too. Errors: kFailedPrecondition, one line naming both.
  Status ResolveTimeLimit(int64_t& seconds) const;

 private:
  // Admit's rights: as_user and priority; the room and bytes of the user's jobs.
  Status CheckAsked(const JobRecord& r, const ScriptRights& rights) const;
  Status CheckRoom(const JobRecord& r, const ScriptRights& rights, const JobTable& jobs,
                   size_t count) const;
  Status ApplyTimeLimit(JobRequest& request) const;

  const NodeOptions* options_;
  const sched::Inventory* devices_;
  Status CheckGpuType(const std::string& type) const;
  UserDirectory* users_;
};

}  // namespace pinpoint::daemon
