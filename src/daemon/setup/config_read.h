// The reading of a configuration file's JSON (config_read.cc), apart from the Config it fills
// (config.h): what ParseConfig and DefaultConfigJson share.
#pragma once

#include <nlohmann/json.hpp>

#include "daemon/setup/config.h"
#include "pinpoint/status.h"

namespace pinpoint::daemon {

// Reads every setting `j` has into `c`, each checked: an unknown key, a wrong type or a bad value
// is one kInvalidArgument line naming the key (config: "key" why).
Status ApplyConfig(const nlohmann::json& j, Config* c);

// The configuration's words for its enums ("auto", "daemons", "env-only"; "requeue", "fail").
const char* MpsModeName(MpsMode mode);
const char* MpsFaultPolicyName(MpsFaultPolicy policy);

}  // namespace pinpoint::daemon
