// A container's cgroup, named the way /proc/<pid>/cgroup names it: "<hierarchy>:<path>", e.g.
// "0::/machine/libpod-3f.scope" (cgroup v2) or "pids:/libpod_parent/libpod-3f" (a v1 hierarchy,
// for hosts in legacy or hybrid mode). Pure text functions, shared by the daemon (which chooses
// and checks a lease's cgroup) and the watcher (which finds the lease's processes).
#pragma once

#include <string>

#include "pinpoint/status.h"

namespace pinpoint {

// The hierarchies a key may name when the v2 path is "/", in the order they are preferred.
// "0:" is the v2 hierarchy.

// The key of the cgroup the process whose /proc/<pid>/cgroup text is `text` is in: the v2 line
// when its path is not "/", else the first of the v1 hierarchies "pids", "memory",
// "name=systemd" whose path is not "/". Errors: kFailedPrecondition when the process is in no
// cgroup but the root ones ("in the root cgroup"); kInvalidArgument for a path that is not
// absolute, has a ".." or "." component, or holds control characters.
Result<std::string> ContainerCgroupKey(const std::string& text);

// True when the process whose /proc/<pid>/cgroup text is `text` is in the cgroup `key` or one
// below it.
bool InCgroup(const std::string& text, const std::string& key);

// The hierarchy ("0:", "pids", "name=systemd") and path of a key; false for a malformed key.
bool SplitCgroupKey(const std::string& key, std::string* hierarchy, std::string* path);

}  // namespace pinpoint
