#include "launch/output_space.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "common/file_util.h"
#include "launch/output_watch.h"
#include "launch/shim.h"

namespace pinpoint::launch {

namespace {

// The job directory's stdout and stderr, opened with `flags` (no link followed, regular files
// only: OpenFileAt) through a descriptor of the directory that OpenJobDir vouched for.
struct OutputFiles {
  UniqueFd out, err;
};

Result<OutputFiles> OpenOutput(const std::string& job_dir, int flags) {
  auto dir = OpenJobDir(job_dir);
  if (!dir.ok()) return dir.status();
  auto out = OpenFileAt(dir->get(), kStdoutFile, flags);
  if (!out.ok()) return out.status();
  auto err = OpenFileAt(dir->get(), kStderrFile, flags);
  if (!err.ok()) return err.status();
  return OutputFiles{std::move(out).value(), std::move(err).value()};
}

}  // namespace

Result<uint64_t> DiskOutputSpace::OutputBytes(const std::string& job_dir) {
  // O_PATH: the files are neither read nor written, only looked at.
  auto files = OpenOutput(job_dir, O_PATH);
  if (!files.ok()) return files.status();
  struct stat out {
  }, err{};
  if (::fstat(files->out.get(), &out) != 0 || ::fstat(files->err.get(), &err) != 0)
    return IoError("fstat in " + job_dir + ": " + ErrnoText(errno));
  return OccupiedBytes(out) + OccupiedBytes(err);
}

Result<DiskSpace> DiskOutputSpace::Space() {
  struct statvfs fs {};
  if (::statvfs(state_dir_.c_str(), &fs) != 0)
    return IoError("statvfs " + state_dir_ + ": " + ErrnoText(errno));
  return DiskSpace{static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize,
                   static_cast<uint64_t>(fs.f_blocks) * fs.f_frsize};
}

Status DiskOutputSpace::Cut(const std::string& job_dir, uint64_t keep_bytes,
                            const std::string& note) {
  auto files = OpenOutput(job_dir, O_WRONLY);
  if (!files.ok()) return files.status();
  return CutOutputTo(files->out.get(), files->err.get(), keep_bytes, note);
}

}  // namespace pinpoint::launch
