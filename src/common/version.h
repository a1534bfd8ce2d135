// The version of this build, as `pinpoint --version` and `pinpointd --version` print it.
#pragma once

namespace pinpoint {

// "0.1.0 (git 6071c49)" when built from a git checkout (`git describe` at configure time,
// "-dirty" when the tree had changes), the project version alone ("0.1.0") otherwise. Never
// empty; a static string.
const char* VersionText();

}  // namespace pinpoint
