// For tests only: a SQLite VFS over the process's default one that asks a hook before each
// write, truncate and sync of any file SQLite opens through it, and fails the operation with the
// code the hook returns (SQLITE_OK lets it through). A full disk is
//   FaultyVfs vfs([&] { return full ? SQLITE_FULL : SQLITE_OK; });
// It is the default VFS from construction until destruction, so only stores opened meanwhile use
// it; close them before it goes (a fixture that holds one closes its stores in TearDown, which runs
// before any member is destroyed). One at a time per process.
#pragma once

#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <utility>

namespace pinpoint::store::testing {

class FaultyVfs {
 public:
  using Hook = std::function<int()>;
  // What the hook is asked about, for a hook that tells them apart (e.g. to count syncs).
  enum class Op { kWrite, kTruncate, kSync };
  using OpHook = std::function<int(Op)>;

  explicit FaultyVfs(Hook hook)
      : FaultyVfs(OpHook([hook = std::move(hook)](Op) { return hook(); })) {}
  explicit FaultyVfs(OpHook hook) : hook_(std::move(hook)) {
    real_ = sqlite3_vfs_find(nullptr);
    vfs_ = *real_;
    vfs_.szOsFile = static_cast<int>(sizeof(File)) + real_->szOsFile;
    vfs_.zName = "pinpoint-faulty";
    vfs_.pAppData = this;
    vfs_.xOpen = Open;
    if (sqlite3_vfs_register(&vfs_, /*makeDflt=*/1) != SQLITE_OK)
      throw std::runtime_error("cannot register the faulty VFS");
  }
  ~FaultyVfs() {
    if (open_ != 0) {
      // A store still open would call a destroyed hook on its next write or close.
      std::fprintf(stderr, "FaultyVfs destroyed with %d file(s) still open through it\n", open_);
      std::abort();
    }
    sqlite3_vfs_unregister(&vfs_);
    sqlite3_vfs_register(real_, /*makeDflt=*/1);
  }
  FaultyVfs(const FaultyVfs&) = delete;
  FaultyVfs& operator=(const FaultyVfs&) = delete;

 private:
  struct File {
    sqlite3_file base;
    FaultyVfs* vfs;
    sqlite3_file* real;  // lives right after this struct, in the block SQLite allocates
  };
  static sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<File*>(f)->real; }
  static const sqlite3_io_methods* M(sqlite3_file* f) { return Real(f)->pMethods; }
  static int Ask(sqlite3_file* f, Op op) { return reinterpret_cast<File*>(f)->vfs->hook_(op); }

  static int Close(sqlite3_file* f) {
    --reinterpret_cast<File*>(f)->vfs->open_;
    return M(f)->xClose(Real(f));
  }
  static int Read(sqlite3_file* f, void* buf, int n, sqlite3_int64 off) {
    return M(f)->xRead(Real(f), buf, n, off);
  }
  static int Write(sqlite3_file* f, const void* buf, int n, sqlite3_int64 off) {
    int rc = Ask(f, Op::kWrite);
    return rc != SQLITE_OK ? rc : M(f)->xWrite(Real(f), buf, n, off);
  }
  static int Truncate(sqlite3_file* f, sqlite3_int64 size) {
    int rc = Ask(f, Op::kTruncate);
    return rc != SQLITE_OK ? rc : M(f)->xTruncate(Real(f), size);
  }
  static int Sync(sqlite3_file* f, int flags) {
    int rc = Ask(f, Op::kSync);
    return rc != SQLITE_OK ? rc : M(f)->xSync(Real(f), flags);
  }
  static int FileSize(sqlite3_file* f, sqlite3_int64* size) {
    return M(f)->xFileSize(Real(f), size);
  }
  static int Lock(sqlite3_file* f, int level) { return M(f)->xLock(Real(f), level); }
  static int Unlock(sqlite3_file* f, int level) { return M(f)->xUnlock(Real(f), level); }
  static int CheckReservedLock(sqlite3_file* f, int* out) {
    return M(f)->xCheckReservedLock(Real(f), out);
  }
  static int FileControl(sqlite3_file* f, int op, void* arg) {
    return M(f)->xFileControl(Real(f), op, arg);
  }
  static int SectorSize(sqlite3_file* f) { return M(f)->xSectorSize(Real(f)); }
  static int DeviceCharacteristics(sqlite3_file* f) {
    return M(f)->xDeviceCharacteristics(Real(f));
  }
  static int ShmMap(sqlite3_file* f, int page, int size, int extend, void volatile** out) {
    return M(f)->xShmMap(Real(f), page, size, extend, out);
  }
  static int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
    return M(f)->xShmLock(Real(f), offset, n, flags);
  }
  static void ShmBarrier(sqlite3_file* f) { M(f)->xShmBarrier(Real(f)); }
  static int ShmUnmap(sqlite3_file* f, int delete_flag) {
    return M(f)->xShmUnmap(Real(f), delete_flag);
  }
  static int Fetch(sqlite3_file* f, sqlite3_int64 off, int n, void** out) {
    return M(f)->xFetch(Real(f), off, n, out);
  }
  static int Unfetch(sqlite3_file* f, sqlite3_int64 off, void* p) {
    return M(f)->xUnfetch(Real(f), off, p);
  }

  static constexpr sqlite3_io_methods kMethods = {
      3,
      Close,
      Read,
      Write,
      Truncate,
      Sync,
      FileSize,
      Lock,
      Unlock,
      CheckReservedLock,
      FileControl,
      SectorSize,
      DeviceCharacteristics,
      ShmMap,
      ShmLock,
      ShmBarrier,
      ShmUnmap,
      Fetch,
      Unfetch,
  };

  static int Open(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* f, int flags,
                  int* out_flags) {
    auto* file = reinterpret_cast<File*>(f);
    file->vfs = static_cast<FaultyVfs*>(vfs->pAppData);
    file->real = reinterpret_cast<sqlite3_file*>(file + 1);
    sqlite3_vfs* real = file->vfs->real_;
    int rc = real->xOpen(real, name, file->real, flags, out_flags);
    // The methods above forward to version 3 methods; the unix VFS has them.
    bool usable = file->real->pMethods != nullptr && file->real->pMethods->iVersion >= 3;
    f->pMethods = usable ? &kMethods : nullptr;
    if (usable) ++file->vfs->open_;  // SQLite closes every file whose methods are set
    if (rc == SQLITE_OK && !usable) return SQLITE_CANTOPEN;
    return rc;
  }

  OpHook hook_;
  sqlite3_vfs* real_ = nullptr;
  int open_ = 0;
  sqlite3_vfs vfs_{};
};

}  // namespace pinpoint::store::testing
