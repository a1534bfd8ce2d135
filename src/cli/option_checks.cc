#include "cli/option_checks.h"

#include <regex>

namespace pinpoint::cli {

bool LooksLikeASizeUnit(const std::string& word) {
  static const std::regex unit("^[kKmMgGtT]?[iI]?[bB]$|^[kKmMgGtT]$");
  return std::regex_match(word, unit);
}

}  // namespace pinpoint::cli
