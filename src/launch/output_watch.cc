#include "launch/output_watch.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>

#include "pinpoint/units.h"

namespace pinpoint::launch {

OutputVerdict WatchOutput(const LaunchSpec& spec, int out_fd, int err_fd, uint64_t* last_bytes) {
  struct stat out {}, err {};
  if (::fstat(out_fd, &out) != 0 || ::fstat(err_fd, &err) != 0) return {};
  uint64_t bytes = static_cast<uint64_t>(out.st_size) + static_cast<uint64_t>(err.st_size);
  bool grew = bytes > *last_bytes;
  *last_bytes = bytes;
  if (spec.max_output_bytes > 0 && bytes > spec.max_output_bytes)
    return {"its output in the job directory passed " + FormatSize(spec.max_output_bytes) +
                " (max_output_bytes); its supervisor ended it and cut the output there",
            true};
  struct statvfs fs {};
  if (spec.reserve_bytes == 0 || !grew || ::fstatvfs(out_fd, &fs) != 0) return {};
  uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  // At most a tenth of the filesystem: a small one is not "full" from the start.
  uint64_t reserve =
      std::min<uint64_t>(spec.reserve_bytes, static_cast<uint64_t>(fs.f_blocks) * fs.f_frsize / 10);
  if (free_bytes >= reserve) return {};
  return {"it wrote output while the state directory's filesystem had " + FormatSize(free_bytes) +
              " free, less than the " + FormatSize(reserve) +
              " kept for the job store (state_reserve_bytes); its supervisor ended it",
          false};
}

void CutOutput(const LaunchSpec& spec, int out_fd, int err_fd) {
  std::string note = "\npinpoint: output cut at " + FormatSize(spec.max_output_bytes) +
                     " (max_output_bytes): the job was ended\n";
  uint64_t room = spec.max_output_bytes > note.size() ? spec.max_output_bytes - note.size() : 0;
  struct stat out {}, err {};
  if (::fstat(out_fd, &out) != 0 || ::fstat(err_fd, &err) != 0) return;
  uint64_t keep_out = std::min<uint64_t>(static_cast<uint64_t>(out.st_size), room);
  uint64_t keep_err = std::min<uint64_t>(static_cast<uint64_t>(err.st_size), room - keep_out);
  (void)!::ftruncate(out_fd, static_cast<off_t>(keep_out));
  (void)!::ftruncate(err_fd, static_cast<off_t>(keep_err));
  (void)!::pwrite(err_fd, note.data(), note.size(), static_cast<off_t>(keep_err));
}

}  // namespace pinpoint::launch
