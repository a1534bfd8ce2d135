// pinpoint-cdi-hook, the OCI hook that pinpoint's CDI specs name (cdi/spec.h,
// docs/containers.md): the container runtime runs it, as root, when a container of a lease is
// created (attach) and after it stops (close). A client of pinpointd like the CLI.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "pinpoint/status.h"

namespace pinpoint::cdi {

// `pinpoint-cdi-hook attach|close LEASE [--socket S] [--cdi-dir D]`: attach reads the
// container's state (JSON, at most 64 KiB) from `in`, takes its pid and its bundle's
// process.user.uid (config.json, at most 4 MiB, not through a link; 0 when it names no user)
// and attaches the lease with both; close closes it and removes the spec. Returns the exit
// code; one error line to `err`.
int RunHook(int argc, char** argv, std::istream& in, std::ostream& err);

// The OCI state's pid and bundle (pure). Errors: kInvalidArgument naming the field.
struct OciState {
  int64_t pid = 0;
  std::string bundle;
};
Result<OciState> ParseOciState(const std::string& text);
// process.user.uid of an OCI config.json's text; 0 when it names no user (the OCI default).
// Errors: kInvalidArgument (not JSON, a uid that is not one).
Result<uint32_t> ParseOciUid(const std::string& text);

}  // namespace pinpoint::cdi
