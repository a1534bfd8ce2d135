#include "launch/output_watch.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "common/file_util.h"
#include "pinpoint/units.h"

namespace pinpoint::launch {

uint64_t OutputOccupiedBytes(int out_fd, int err_fd) {
  struct stat out {
  }, err{};
  if (::fstat(out_fd, &out) != 0 || ::fstat(err_fd, &err) != 0) return 0;
  // One file for both (the same inode) is counted once.
  if (out.st_dev == err.st_dev && out.st_ino == err.st_ino) return OccupiedBytes(out);
  return OccupiedBytes(out) + OccupiedBytes(err);
}

OutputVerdict WatchOutput(const LaunchSpec& spec, int out_fd, int err_fd) {
  if (spec.max_output_bytes == 0) return {};
  uint64_t bytes = OutputOccupiedBytes(out_fd, err_fd);
  if (bytes <= spec.max_output_bytes) return {};
  return {"its output in the job directory passed " + FormatSize(spec.max_output_bytes) +
              " (max_output_bytes): it took " + FormatSize(bytes) +
              " on disk; its supervisor ended it and cut the output there",
          true};
}

Status CutOutputTo(int out_fd, int err_fd, uint64_t keep_bytes, const std::string& note) {
  struct stat out {
  }, err{};
  if (::fstat(out_fd, &out) != 0 || ::fstat(err_fd, &err) != 0)
    return IoError("fstat of the job's output: " + ErrnoText(errno));
  uint64_t room = keep_bytes > note.size() ? keep_bytes - note.size() : 0;
  uint64_t keep_out = std::min<uint64_t>(static_cast<uint64_t>(out.st_size), room);
  uint64_t keep_err = std::min<uint64_t>(static_cast<uint64_t>(err.st_size), room - keep_out);
  // A truncate frees every block past the new end, those preallocated past the old end too
  // (ext4, XFS and tmpfs do so even when the size does not change).
  if (::ftruncate(out_fd, static_cast<off_t>(keep_out)) != 0 ||
      ::ftruncate(err_fd, static_cast<off_t>(keep_err)) != 0)
    return IoError("truncate of the job's output: " + ErrnoText(errno));
  if (::pwrite(err_fd, note.data(), note.size(), static_cast<off_t>(keep_err)) < 0)
    return IoError("writing the note on the job's stderr: " + ErrnoText(errno));
  return Status::Ok();
}

void CutOutput(const LaunchSpec& spec, int out_fd, int err_fd) {
  std::string note = "\npinpoint: output cut at " + FormatSize(spec.max_output_bytes) +
                     " (max_output_bytes): the job was ended\n";
  (void)CutOutputTo(out_fd, err_fd, spec.max_output_bytes, note);
}

void TrimOutput(int out_fd, int err_fd) {
  for (int fd : {out_fd, err_fd}) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_blksize <= 0) continue;
    // Only a file with blocks past its last one is truncated (a truncate also touches mtime).
    uint64_t block = static_cast<uint64_t>(st.st_blksize);
    uint64_t used = (static_cast<uint64_t>(st.st_size) + block - 1) / block * block;
    if (OccupiedBytes(st) <= used) continue;
    (void)!::ftruncate(fd, st.st_size);
  }
}

}  // namespace pinpoint::launch
