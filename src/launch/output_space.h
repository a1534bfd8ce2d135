// OutputSpace: what pinpointd measures of its running jobs' output on the state directory's
// filesystem, that filesystem's free space, and the cut it makes of the output of a job it ended
// for it (daemon/node/output_guard.h). Behind an interface so that the daemon's rules are tested
// with FakeOutputSpace (a disk as full as the test says), as leveldb tests through its Env.
//
// Not thread-safe: the daemon's main loop is its only caller. Every call but a cut is a few system
// calls on files in pinpointd's own job directories (fstat, fstatvfs): nothing a user can make it
// wait on, no directory walked. A cut (ftruncate) of a file whose pages a user dirtied costs the
// dropping of them (a job writing stdout without end leaves GBs: 234 ms of the loop on an H100
// machine), so the loop asks for it with CutLater, which DiskOutputSpace makes on a thread of its
// own.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "pinpoint/status.h"

namespace pinpoint::launch {

// A filesystem's space: what users may still take (f_bavail) and its size, in bytes.
struct DiskSpace {
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
};

class OutputSpace {
 public:
  virtual ~OutputSpace() = default;
  // What the job directory's stdout and stderr occupy together: their allocated blocks
  // (st_blocks * 512, output_watch.h), so that preallocated blocks count and holes do not. Each
  // is opened without following links, by a descriptor of the job directory (shim.h
  // OpenJobDir: owned by pinpointd's user, writable by nobody else), and only fstat is asked of
  // it. Errors: kNotFound when the directory or a file is not there (yet); kIo otherwise.
  virtual Result<uint64_t> OutputBytes(const std::string& job_dir) = 0;
  // The space of the filesystem that holds the state directory. Errors: kIo.
  virtual Result<DiskSpace> Space() = 0;
  // Cuts the job directory's stdout and stderr to `keep_bytes` together, ending stderr with
  // `note` (output_watch.h CutOutputTo); called once the job's processes are gone. Errors:
  // kNotFound, kIo, as OutputBytes.
  virtual Status Cut(const std::string& job_dir, uint64_t keep_bytes, const std::string& note) = 0;
  // Cut, made where the caller does not wait for it; `done` gets its result, on the thread that
  // made it (it may outlive the caller: it must hold what it needs). This one makes it at once.
  virtual void CutLater(const std::string& job_dir, uint64_t keep_bytes, const std::string& note,
                        std::function<void(const Status&)> done) {
    done(Cut(job_dir, keep_bytes, note));
  }
};

// The real one, on the filesystem of `state_dir`.
// Its cuts asked with CutLater are made in order on one thread of its own, started at the first;
// the destructor makes those still asked for, then joins it. Cut is stateless: the thread and the
// loop's calls share nothing.
class DiskOutputSpace : public OutputSpace {
 public:
  explicit DiskOutputSpace(std::string state_dir) : state_dir_(std::move(state_dir)) {}
  ~DiskOutputSpace() override;
  Result<uint64_t> OutputBytes(const std::string& job_dir) override;
  Result<DiskSpace> Space() override;
  Status Cut(const std::string& job_dir, uint64_t keep_bytes, const std::string& note) override;
  void CutLater(const std::string& job_dir, uint64_t keep_bytes, const std::string& note,
                std::function<void(const Status&)> done) override;

 private:
  void Cutter();

  std::string state_dir_;
  std::mutex mu_;
  std::condition_variable more_;
  std::deque<std::function<void()>> cuts_;  // guarded by mu_
  bool stopping_ = false;                   // guarded by mu_
  std::thread cutter_;                      // started by the first CutLater
};

}  // namespace pinpoint::launch
