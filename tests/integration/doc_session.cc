#include "integration/doc_session.h"

#include <regex>

namespace pinpoint::testing {

namespace {

std::string Trim(const std::string& s) {
  size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

// Also the CR of a CRLF line end (CSV output), which a page cannot show.
std::string TrimRight(const std::string& s) {
  size_t end = s.find_last_not_of(" \t\r");
  return end == std::string::npos ? "" : s.substr(0, end + 1);
}

// One expected line as a regex: `{{word}}` is any text, a run of spaces any run of spaces.
std::regex LinePattern(const std::string& expected) {
  static const std::regex placeholder(R"(\{\{[A-Za-z0-9_ -]+\}\})");
  std::string pattern;
  std::string text = TrimRight(expected);
  size_t at = 0;
  auto literal = [&](const std::string& part) {
    for (size_t i = 0; i < part.size(); ++i) {
      char c = part[i];
      if (c == ' ') {
        while (i + 1 < part.size() && part[i + 1] == ' ') ++i;
        pattern += " +";
      } else if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) {
        pattern += std::string("\\") + c;
      } else {
        pattern += c;
      }
    }
  };
  for (std::sregex_iterator it(text.begin(), text.end(), placeholder), end; it != end; ++it) {
    literal(text.substr(at, static_cast<size_t>(it->position()) - at));
    pattern += ".*?";
    at = static_cast<size_t>(it->position() + it->length());
  }
  literal(text.substr(at));
  return std::regex(pattern);
}

bool MatchFrom(const std::vector<std::string>& expected, size_t e,
               const std::vector<std::string>& actual, size_t a) {
  if (e == expected.size()) return a == actual.size();
  if (Trim(expected[e]) == "...") {
    for (size_t skip = a; skip <= actual.size(); ++skip)
      if (MatchFrom(expected, e + 1, actual, skip)) return true;
    return false;
  }
  if (a == actual.size()) return false;
  if (!std::regex_match(TrimRight(actual[a]), LinePattern(expected[e]))) return false;
  return MatchFrom(expected, e + 1, actual, a + 1);
}

}  // namespace

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

std::vector<FencedBlock> FencedBlocks(const std::string& markdown) {
  std::vector<FencedBlock> out;
  std::vector<std::string> lines = SplitLines(markdown);
  FencedBlock* open = nullptr;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.rfind("```", 0) == 0) {
      if (open == nullptr) {
        out.push_back({static_cast<int>(i) + 1, Trim(line.substr(3)), {}});
        open = &out.back();
      } else {
        open = nullptr;
      }
      continue;
    }
    if (open != nullptr) open->lines.push_back(line);
  }
  return out;
}

std::vector<SessionStep> SessionSteps(const FencedBlock& block) {
  std::vector<SessionStep> steps;
  bool continued = false;
  for (size_t i = 0; i < block.lines.size(); ++i) {
    const std::string& line = block.lines[i];
    if (continued) {
      steps.back().command += "\n" + line;
    } else if (line.rfind("$ ", 0) == 0) {
      steps.push_back({block.line + 1 + static_cast<int>(i), line.substr(2), {}});
    } else if (!steps.empty()) {
      steps.back().expected.push_back(line);
      continue;
    }
    continued =
        !steps.empty() && !line.empty() && line.back() == '\\' && steps.back().expected.empty();
  }
  return steps;
}

bool OutputMatches(const std::vector<std::string>& expected,
                   const std::vector<std::string>& actual) {
  return MatchFrom(expected, 0, actual, 0);
}

}  // namespace pinpoint::testing
