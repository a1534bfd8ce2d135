// Job time limits as people write them: `pinpoint submit --time`, and the configuration's
// default_time_limit and max_time_limit.
#pragma once

#include <cstdint>
#include <string>

#include "pinpoint/status.h"

namespace pinpoint {

// The longest time limit a request may carry (JobRequest::time_limit_s): 100 years of 365 days.
inline constexpr int64_t kMaxTimeLimitS = int64_t{36500} * 86400;

// Parses a time limit into seconds. Slurm's forms: "M" (minutes), "M:S", "H:M:S", "D-H",
// "D-H:M", "D-H:M:S"; or one whole number with a unit: "30s", "10m", "2h", "1d" (either case).
// Every field is a whole number of decimal digits; after the first field of a colon form,
// minutes and seconds are below 60, and hours after a day count below 24. "0" (in any form)
// is 0. Errors: kInvalidArgument naming the text and the forms, for anything else and for a
// limit above kMaxTimeLimitS.
Result<int64_t> ParseTimeLimit(const std::string& text);

// Slurm's way of showing a limit, which ParseTimeLimit reads back: "M:SS" under an hour
// ("30:00"), "H:MM:SS" under a day ("1:30:00"), else "D-HH:MM:SS" ("2-00:00:00").
std::string FormatTimeLimit(int64_t seconds);

}  // namespace pinpoint
