#include "cli/option_checks.h"

#include <exception>
#include <regex>

namespace pinpoint::cli {

CLI::Validator CountIn(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        int64_t value = 0;
        size_t used = 0;
        try {
          value = std::stoll(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        std::string range = std::to_string(lo) + " to " + std::to_string(hi);
        if (used == 0 || used != text.size()) return "'" + text + "' is not a whole number (" + range + ")";
        if (value < lo || value > hi) return text + " is out of range (" + range + ")";
        return "";
      },
      "INT in [" + std::to_string(lo) + " - " + std::to_string(hi) + "]");
}

bool LooksLikeASizeUnit(const std::string& word) {
  static const std::regex unit("^[kKmMgGtT]?[iI]?[bB]$|^[kKmMgGtT]$");
  return std::regex_match(word, unit);
}

}  // namespace pinpoint::cli
