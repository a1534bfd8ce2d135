// Checks of command-line words that say what is wrong in a person's terms (issue 27): a size
// typed as two words. (A count that is no number: usage.h CountIn, a CLI11 validator.)
#pragma once

#include <string>

namespace pinpoint::cli {

// Whether `word` is a size unit alone ("GB", "g", "MiB"): "--gpu-mem 4 GB" typed as two words
// leaves "GB" to be read as the command's first word.
bool LooksLikeASizeUnit(const std::string& word);

}  // namespace pinpoint::cli
