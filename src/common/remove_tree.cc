#include "common/remove_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "common/file_util.h"

namespace pinpoint {
namespace {

// The names in `dir_fd`, at most `max` of them (".", ".." left out).
Result<std::vector<std::string>> ListNames(int dir_fd, const std::string& path, int64_t max) {
  int fd = ::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return IoError("dup " + path + ": " + ErrnoText(errno));
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return IoError("read " + path + ": " + ErrnoText(errno));
  }
  ::rewinddir(dir);  // the dup shares its offset with dir_fd
  std::vector<std::string> names;
  errno = 0;
  while (static_cast<int64_t>(names.size()) < max) {
    dirent* e = ::readdir(dir);
    if (e == nullptr) break;
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(std::move(n));
  }
  int err = errno;
  ::closedir(dir);
  if (err != 0) return IoError("read " + path + ": " + ErrnoText(err));
  return names;
}

Status RemoveEntry(int parent_fd, const std::string& name, const std::string& path, dev_t dev,
                   int depth, RemoveTreeBudget* budget);

// Empties the directory `dir_fd` (at `path`, `depth` below the top).
Status RemoveContents(int dir_fd, const std::string& path, dev_t dev, int depth,
                      RemoveTreeBudget* budget) {
  while (true) {
    // One name more than the budget tells "spent" from "done".
    auto names = ListNames(dir_fd, path, budget->entries_left + 1);
    if (!names.ok()) return names.status();
    if (names->empty()) return Status::Ok();
    for (const auto& n : *names)
      PP_RETURN_IF_ERROR(RemoveEntry(dir_fd, n, path + "/" + n, dev, depth, budget));
  }
}

Status RemoveEntry(int parent_fd, const std::string& name, const std::string& path, dev_t dev,
                   int depth, RemoveTreeBudget* budget) {
  if (budget->entries_left <= 0) return Unavailable("removal budget spent at " + path);
  struct stat st {};
  if (::fstatat(parent_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return IoError("stat " + path + ": " + ErrnoText(errno));
  }
  if (S_ISDIR(st.st_mode)) {
    if (st.st_dev != dev) return FailedPrecondition(path + " is a mount point; left alone");
    if (depth >= budget->max_depth)
      return FailedPrecondition(path + " lies deeper than " + std::to_string(budget->max_depth) +
                                " directories");
    int fd = ::openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return IoError("open " + path + ": " + ErrnoText(errno));
    UniqueFd dir(fd);
    struct stat opened {};
    if (::fstat(dir.get(), &opened) != 0 || opened.st_dev != st.st_dev ||
        opened.st_ino != st.st_ino)
      return IoError(path + " changed while it was being removed");
    PP_RETURN_IF_ERROR(RemoveContents(dir.get(), path, dev, depth + 1, budget));
  }
  // unlinkat removes a link itself, never what it points to.
  if (::unlinkat(parent_fd, name.c_str(), S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) != 0 &&
      errno != ENOENT)
    return IoError("remove " + path + ": " + ErrnoText(errno));
  --budget->entries_left;
  return Status::Ok();
}

}  // namespace

Status RemoveTreeAt(int parent_fd, const std::string& name, RemoveTreeBudget* budget) {
  struct stat parent {};
  if (::fstat(parent_fd, &parent) != 0)
    return IoError("stat the parent of " + name + ": " + ErrnoText(errno));
  return RemoveEntry(parent_fd, name, name, parent.st_dev, 0, budget);
}

}  // namespace pinpoint
