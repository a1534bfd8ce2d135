// Room kept for root. Every node-wide cap that users together can fill (jobs held, log followers;
// the socket's connections have their own setting, root_reserved_connections) keeps its last
// places for root, so that users who fill the node never lock out root: the administrator, the
// batch-system integrations and the package's scripts, which all run as root.
#pragma once

#include <algorithm>
#include <cstddef>

namespace pinpoint {

// The places of `cap` that only root may take: a sixteenth, at least 1 (none of a cap below 2,
// which users could otherwise never use). 0 for cap 0 (no limit).
inline size_t RootReserve(size_t cap) { return cap < 2 ? 0 : std::max<size_t>(1, cap / 16); }

// What `cap` leaves to one caller: all of it to root, cap - RootReserve(cap) to anyone else. 0
// stays 0 (no limit).
inline size_t CapFor(size_t cap, bool root) { return root ? cap : cap - RootReserve(cap); }

}  // namespace pinpoint
