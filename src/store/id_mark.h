// The job-id high-water mark: a small file beside the job store that says which ids may already
// have been handed out, so that ids stay monotonic (and job directories unshared) even when the
// database is lost, replaced by an older backup, or its last commits are dropped.
#pragma once

#include <string>

#include "pinpoint/job.h"
#include "pinpoint/status.h"

namespace pinpoint::store {

// How many ids one write of the mark reserves: a store lost after a crash skips at most this
// many ids, and only every kIdMarkBlock-th submit writes the mark.
inline constexpr JobId kIdMarkBlock = 64;

// "<dir>/pinpoint.db" -> "<dir>/pinpoint.last-id": the mark file of a store. Its name does not
// start with the database's, so moving `pinpoint.db*` aside keeps it.
std::string IdMarkPath(const std::string& db_path);

// The mark: 0 when the file does not exist. Errors: kFailedPrecondition when the file holds
// anything but a decimal id and a newline (one line naming the file); kIo.
Result<JobId> ReadIdMark(const std::string& path);
// Replaces the mark durably (temporary file, fsync, rename, fsync of the directory), mode 0600.
// Errors: kIo; the old mark is then still in place.
Status WriteIdMark(const std::string& path, JobId mark);

// The largest id among the entries of `jobs_dir` whose names are decimal job ids (each job's
// directory is jobs/<id>); 0 when there are none or the directory does not exist.
// Errors: kIo when it exists but cannot be listed.
Result<JobId> LargestJobDirId(const std::string& jobs_dir);

}  // namespace pinpoint::store
