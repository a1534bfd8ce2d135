#include "pinpoint/array_spec.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "common/decimal.h"
#include "pinpoint/escape.h"

namespace pinpoint {

namespace {

constexpr char kExamples[] = "e.g. 1-100, 0-15:4 or 1,3,5-7, and %K to run at most K at once";

// The text as an error quotes it: escaped, and cut when long (a spec may list thousands of
// indices).
std::string Quoted(std::string_view text) {
  constexpr size_t kShown = 40;
  std::string shown = EscapeForTerminal(text.substr(0, kShown));
  return "'" + shown + (text.size() > kShown ? "...'" : "'");
}

Status Invalid(std::string_view text, const std::string& why) {
  return InvalidArgument("invalid array " + Quoted(text) + ": " + why);
}

struct Item {
  int64_t first = 0, last = 0, step = 1;
};

// One comma-separated item: N, A-B or A-B:S.
Result<Item> ParseItem(std::string_view spec, std::string_view item) {
  if (item.empty()) return Invalid(spec, "an empty item (" + std::string(kExamples) + ")");
  Item out;
  size_t dash = item.find('-');
  size_t colon = item.find(':');
  std::string_view first = item.substr(0, std::min(dash, colon));
  auto not_index = [&](std::string_view what) {
    return Invalid(spec, Quoted(what) + " is not an index (" + kExamples + ")");
  };
  auto value = [&](std::string_view digits, int64_t* into) -> Status {
    auto n = ParseDecimal(digits, kMaxArrayIndex);
    if (!n) return not_index(digits);
    if (*n > kMaxArrayIndex)
      return Invalid(spec, "index " + EscapeForTerminal(digits.substr(0, 20)) +
                               (digits.size() > 20 ? "..." : "") + " is above " +
                               std::to_string(kMaxArrayIndex) + ", the largest");
    *into = *n;
    return Status::Ok();
  };
  if (first.empty()) return not_index(item);
  PP_RETURN_IF_ERROR(value(first, &out.first));
  out.last = out.first;
  if (dash == std::string_view::npos) {
    if (colon != std::string_view::npos) return Invalid(spec, "a step (:S) needs a range (A-B:S)");
    return out;
  }
  if (colon != std::string_view::npos && colon < dash) return not_index(item);
  std::string_view rest = item.substr(dash + 1);
  size_t step_at = rest.find(':');
  std::string_view last = rest.substr(0, step_at);
  if (last.empty()) return Invalid(spec, "range " + Quoted(item) + " has no end");
  PP_RETURN_IF_ERROR(value(last, &out.last));
  if (out.last < out.first)
    return Invalid(spec, "range " + std::to_string(out.first) + "-" + std::to_string(out.last) +
                             " ends before it starts");
  if (step_at != std::string_view::npos) {
    std::string_view step = rest.substr(step_at + 1);
    auto n = ParseDecimal(step, kMaxArrayIndex);
    if (!n) return Invalid(spec, "step " + Quoted(step) + " is not a whole number");
    if (*n == 0) return Invalid(spec, "a step must be at least 1");
    out.step = std::min<int64_t>(*n, kMaxArrayIndex + 1);  // a longer step leaves one index
  }
  return out;
}

}  // namespace

Result<ArraySpec> ParseArraySpec(std::string_view text) {
  if (text.empty()) return Invalid(text, std::string("give task indices, ") + kExamples);
  ArraySpec spec;
  std::string_view list = text;
  size_t percent = text.find('%');
  if (percent != std::string_view::npos) {
    list = text.substr(0, percent);
    std::string_view k = text.substr(percent + 1);
    auto n = ParseDecimal(k, kMaxArrayTasks);
    if (!n) return Invalid(text, "%K needs a whole number K (at most K tasks run at once)");
    if (*n == 0) return Invalid(text, "%0 would run no task; K is at least 1");
    if (*n > kMaxArrayTasks)
      return Invalid(text, "%K is at most " + std::to_string(kMaxArrayTasks) +
                               " (the most tasks of an array)");
    spec.limit = static_cast<int>(*n);
  }
  std::vector<Item> items;
  int64_t tasks = 0;
  size_t start = 0;
  while (true) {
    size_t comma = list.find(',', start);
    auto item = ParseItem(
        text, list.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (!item.ok()) return item.status();
    tasks += (item->last - item->first) / item->step + 1;
    if (tasks > kMaxArrayTasks)
      return Invalid(text, "more than " + std::to_string(kMaxArrayTasks) +
                               " tasks; an array has at most " + std::to_string(kMaxArrayTasks));
    items.push_back(*item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  for (const Item& item : items) {
    for (int64_t i = item.first; i <= item.last; i += item.step)
      spec.indices.push_back(static_cast<int>(i));
  }
  std::sort(spec.indices.begin(), spec.indices.end());
  spec.indices.erase(std::unique(spec.indices.begin(), spec.indices.end()), spec.indices.end());
  return spec;
}

std::string FormatArraySpec(const ArraySpec& spec) {
  std::string out;
  const std::vector<int>& v = spec.indices;
  for (size_t i = 0; i < v.size();) {
    // The longest run from v[i] with one step; a run of two with a step above 1 is two items.
    size_t end = i + 1;
    if (end < v.size()) {
      int step = v[end] - v[i];
      while (end + 1 < v.size() && v[end + 1] - v[end] == step) ++end;
      if (step > 1 && end == i + 1) end = i;  // not worth a range: written as one index
    } else {
      end = i;
    }
    if (!out.empty()) out += ',';
    out += std::to_string(v[i]);
    if (end > i) {
      int step = v[i + 1] - v[i];
      out += "-" + std::to_string(v[end]);
      if (step > 1) out += ":" + std::to_string(step);
    }
    i = end + 1;
  }
  if (spec.limit > 0) out += "%" + std::to_string(spec.limit);
  return out;
}

}  // namespace pinpoint
