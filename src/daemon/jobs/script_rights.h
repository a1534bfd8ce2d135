// Whose rights judge each field of a submit (docs/security.md "A job script's directives"). A
// field the caller gave is judged with the caller's rights. A field that came from the job's
// script (SubmitRequest::from_script) is text from a file the job's user can write, so it is
// judged with the rights of the user the job runs as: root submitting a user's script
// (`--as-user`) takes from it no more than that user could ask for on their own, and a user's
// own script is judged as the user, as always. Pure; any thread.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "api/caller.h"
#include "pinpoint/api.h"
#include "pinpoint/status.h"

namespace pinpoint::daemon {

class ScriptRights {
 public:
  // The job runs as `job_uid`/`job_gid`, named `job_user`. `from_script` is not owned and must
  // outlive this.
  ScriptRights(const api::Caller& caller, uint32_t job_uid, uint32_t job_gid, std::string job_user,
               const ScriptOrigins& from_script)
      : caller_(caller),
        job_uid_(job_uid),
        job_gid_(job_gid),
        job_user_(std::move(job_user)),
        from_script_(&from_script) {}

  // Whose rights judge `fields` (judged by one check together): the caller's, unless one of them
  // came from the script and the job runs as another user; then that user's (the caller's pid).
  api::Caller For(std::initializer_list<ScriptField> fields) const;

  // `status` as the one line a person reads: unchanged when it is ok or none of `fields` came
  // from the script; else its code, with where the first of them was ("job.sh:3: ") before its
  // message and, when the job runs as another user than the caller, whose rights judged it.
  Status Explain(Status status, std::initializer_list<ScriptField> fields) const;

 private:
  // Where the first of `fields` that the script gave was; nullptr when none was.
  const std::string* PlaceOf(std::initializer_list<ScriptField> fields) const;

  api::Caller caller_;
  uint32_t job_uid_;
  uint32_t job_gid_;
  std::string job_user_;
  const ScriptOrigins* from_script_;
};

}  // namespace pinpoint::daemon
