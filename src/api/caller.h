// Who is calling, as the kernel says (SO_PEERCRED), and what they may do.
#pragma once

#include <cstdint>
#include <string>

#include "pinpoint/status.h"

namespace pinpoint::api {

struct Caller {
  uint32_t uid = 0;
  uint32_t gid = 0;
  int64_t pid = 0;
  bool IsRoot() const { return uid == 0; }
};

// Reads the peer's credentials of a connected Unix socket. Errors: kIo.
Result<Caller> PeerCaller(int fd);

// The permission rule: everyone may list and show; a user may cancel (and read the logs of)
// only their own jobs; root may act on any job.
bool MayControlJob(const Caller& caller, uint32_t job_uid);

// Only root may submit a job to run as another user (the batch-system integrations do).
// Errors: kPermissionDenied.
Status CheckSubmitAs(const Caller& caller, const std::string& as_user);

}  // namespace pinpoint::api
