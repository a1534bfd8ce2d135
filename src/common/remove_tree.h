// Removing a directory tree that its user may still change (a job directory), as root, without
// ever acting outside it.
#pragma once

#include <cstdint>
#include <string>

#include "pinpoint/status.h"

namespace pinpoint {

// What one removal may cost.
struct RemoveTreeBudget {
  int max_depth = 64;            // directories below the top one
  int64_t entries_left = 10000;  // names removed (files, links, directories); spent as it goes
};

// Removes `name` in the directory `parent_fd` and everything under it. Never follows a link: a
// link (where the top directory or any entry below it is expected) is removed itself, and every
// directory is opened with O_NOFOLLOW | O_DIRECTORY relative to its parent's descriptor, checked
// to be the entry that was examined (same device and inode), so a name swapped for a link
// between the look and the open is refused. Never crosses into another filesystem (a mount
// point is left alone). Ok when `name` is missing.
// Errors: kUnavailable when budget->entries_left ran out first (what is left can be removed by
// a later call); kFailedPrecondition for a tree deeper than max_depth or a mount point inside;
// kIo naming the entry and errno text (e.g. a directory that is not empty because someone wrote
// into it meanwhile).
Status RemoveTreeAt(int parent_fd, const std::string& name, RemoveTreeBudget* budget);

}  // namespace pinpoint
