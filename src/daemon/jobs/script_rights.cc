#include "daemon/jobs/script_rights.h"

namespace pinpoint::daemon {

const std::string* ScriptRights::PlaceOf(std::initializer_list<ScriptField> fields) const {
  for (ScriptField field : fields) {
    auto it = from_script_->find(field);
    if (it != from_script_->end()) return &it->second;
  }
  return nullptr;
}

api::Caller ScriptRights::For(std::initializer_list<ScriptField> fields) const {
  if (job_uid_ == caller_.uid || PlaceOf(fields) == nullptr) return caller_;
  api::Caller user = caller_;
  user.uid = job_uid_;
  user.gid = job_gid_;
  return user;
}

Status ScriptRights::Explain(Status status, std::initializer_list<ScriptField> fields) const {
  const std::string* place = PlaceOf(fields);
  if (status.ok() || place == nullptr) return status;
  std::string line = *place + ": " + status.message();
  if (job_uid_ != caller_.uid)
    line += " (a job script's directives carry the rights of the user the job runs as, " +
            job_user_ + ", not the submitter's)";
  return Status(status.code(), std::move(line));
}

}  // namespace pinpoint::daemon
