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

DiskOutputSpace::~DiskOutputSpace() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  more_.notify_all();
  if (cutter_.joinable()) cutter_.join();
}

void DiskOutputSpace::CutLater(const std::string& job_dir, uint64_t keep_bytes,
                               const std::string& note, std::function<void(const Status&)> done) {
  std::lock_guard<std::mutex> lock(mu_);
  cuts_.push_back([this, job_dir, keep_bytes, note, done = std::move(done)] {
    done(Cut(job_dir, keep_bytes, note));
  });
  if (!cutter_.joinable()) cutter_ = std::thread([this] { Cutter(); });
  more_.notify_one();
}

void DiskOutputSpace::Cutter() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    more_.wait(lock, [&] { return stopping_ || !cuts_.empty(); });
    if (cuts_.empty()) return;  // stopping, and every cut asked for made
    std::function<void()> cut = std::move(cuts_.front());
    cuts_.pop_front();
    lock.unlock();
    cut();
    lock.lock();
  }
}

Status DiskOutputSpace::Cut(const std::string& job_dir, uint64_t keep_bytes,
                            const std::string& note) {
  auto files = OpenOutput(job_dir, O_WRONLY);
  if (!files.ok()) return files.status();
  return CutOutputTo(files->out.get(), files->err.get(), keep_bytes, note);
}

}  // namespace pinpoint::launch
