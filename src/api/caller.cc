#include "api/caller.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace pinpoint::api {

Result<Caller> PeerCaller(int fd) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
    return IoError(std::string("SO_PEERCRED: ") + std::strerror(errno));
  Caller c;
  c.uid = cred.uid;
  c.gid = cred.gid;
  c.pid = cred.pid;
  return c;
}

bool MayControlJob(const Caller& caller, uint32_t job_uid) {
  return caller.IsRoot() || caller.uid == job_uid;
}

Status CheckSubmitAs(const Caller& caller, const std::string& as_user) {
  if (as_user.empty() || caller.IsRoot()) return Status::Ok();
  return PermissionDenied("only root may submit a job as another user ('" + as_user + "')");
}

}  // namespace pinpoint::api
