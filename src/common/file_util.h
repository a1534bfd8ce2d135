// Small filesystem helpers with Status errors.
#pragma once

#include <cstdint>
#include <string>

#include "pinpoint/status.h"

namespace pinpoint {

// Writes `data` to `path` so that a reader sees the old or the new content, never a mix, and the
// new content survives a crash once this returns: temporary file, fsync, rename, fsync of the
// directory. Errors: kIo naming the path and errno text.
// With durable=false the fsyncs are skipped: atomic for readers and across a crash of this
// process, not across a power loss.
Status WriteFileAtomic(const std::string& path, const std::string& data, int mode = 0644,
                       bool durable = true);

// Reads at most `max_bytes` from the end of the file (the whole file when it is smaller).
// Errors: kNotFound when missing, kIo otherwise.
Result<std::string> ReadFileTail(const std::string& path, uint64_t max_bytes);
Result<std::string> ReadFile(const std::string& path);

// mkdir -p with `mode` for created directories. Errors: kIo.
Status MakeDirs(const std::string& path, int mode = 0755);

// "strerror(errno)" as a string.
std::string ErrnoText(int err);

}  // namespace pinpoint
