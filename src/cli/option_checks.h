// Checks of command-line words that say what is wrong in a person's terms (issue 27): a count
// that is no number, a size typed as two words.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace pinpoint::cli {

// A whole number in [lo, hi], for counts: "'abc' is not a whole number (0 to 1024)", "2000 is out
// of range (0 to 1024)" (CLI::Range alone answers "Value abc not in range").
CLI::Validator CountIn(int64_t lo, int64_t hi);

// Whether `word` is a size unit alone ("GB", "g", "MiB"): "--gpu-mem 4 GB" typed as two words
// leaves "GB" to be read as the command's first word.
bool LooksLikeASizeUnit(const std::string& word);

}  // namespace pinpoint::cli
