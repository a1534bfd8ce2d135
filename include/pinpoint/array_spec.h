// Job arrays (`pinpoint submit --array`, docs/cli.md "Job arrays"): the task indices as Slurm
// users write them. Pure functions, shared by the CLI (which refuses a bad spec before sending)
// and the daemon (which checks what any client sent).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pinpoint/status.h"

namespace pinpoint {

// At most this many tasks in one array (a node's configuration may lower it: max_array_tasks),
// and task indices from 0 to kMaxArrayIndex.
inline constexpr int kMaxArrayTasks = 10000;
inline constexpr int kMaxArrayIndex = 999'999;

// An array's tasks: their indices, and how many of them may run at once.
struct ArraySpec {
  std::vector<int> indices;  // ascending and distinct; 1 to kMaxArrayTasks of them
  int limit = 0;  // %K: at most this many tasks of the array running at once; 0: no limit
  bool operator==(const ArraySpec&) const = default;
};

// Parses Slurm's --array syntax: comma-separated items, each an index (`7`), a range (`1-100`,
// both ends included) or a range with a step (`0-15:4` = 0,4,8,12), then optionally `%K` (K from
// 1 to kMaxArrayTasks). Indices are sorted and duplicates merged, as Slurm does. Nothing else is
// accepted: no spaces, signs or empty items.
// Cost: O(text + tasks); an item naming more than kMaxArrayTasks tasks is refused before any is
// listed, and so is a spec whose items name more than kMaxArrayTasks in all (duplicates counted).
// Errors: kInvalidArgument, one line that quotes the text (escaped, cut when long) and says what
// is wrong: a range that ends before it starts (`5-1`), an empty end (`1-`), not a number (`a`),
// `%0`, an index above kMaxArrayIndex, a step of 0, too many tasks.
Result<ArraySpec> ParseArraySpec(std::string_view text);

// The spec in the syntax ParseArraySpec reads, shortest runs first: `1-100`, `0-12:4`,
// `1,3,5-7%2`. ParseArraySpec(FormatArraySpec(s)) == s for every spec it returned.
std::string FormatArraySpec(const ArraySpec& spec);

}  // namespace pinpoint
