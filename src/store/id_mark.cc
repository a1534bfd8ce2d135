#include "store/id_mark.h"

#include <dirent.h>

#include <cerrno>
#include <charconv>

#include "common/file_util.h"

namespace pinpoint::store {
namespace {

// The most a valid mark file holds: 19 digits of an int64 and a newline.
constexpr uint64_t kMaxMarkBytes = 32;

// A decimal id of at most 18 digits (so it fits an int64 with room to add a block), or -1.
JobId ParseId(std::string_view text) {
  if (text.empty() || text.size() > 18) return -1;
  JobId id = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (error != std::errc() || end != text.data() + text.size()) return -1;
  return id;
}

}  // namespace

std::string IdMarkPath(const std::string& db_path) {
  std::string base = db_path;
  if (base.size() > 3 && base.ends_with(".db")) base.resize(base.size() - 3);
  return base + ".last-id";
}

Result<JobId> ReadIdMark(const std::string& path) {
  Result<std::string> text = ReadFileTail(path, kMaxMarkBytes + 1);
  if (!text.ok()) {
    if (text.status().code() == Code::kNotFound) return JobId{0};
    return text.status();
  }
  std::string_view digits = *text;
  if (digits.ends_with('\n')) digits.remove_suffix(1);
  JobId mark = text->size() > kMaxMarkBytes ? -1 : ParseId(digits);
  if (mark < 0) {
    return FailedPrecondition(path + " is damaged (it should hold the last job id handed out); " +
                              "see docs/store.md, \"Recovering a damaged store\"");
  }
  return mark;
}

Status WriteIdMark(const std::string& path, JobId mark) {
  return WriteFileAtomic(path, std::to_string(mark) + "\n", 0600);
}

Result<JobId> LargestJobDirId(const std::string& jobs_dir) {
  DIR* dir = ::opendir(jobs_dir.c_str());
  if (dir == nullptr) {
    if (errno == ENOENT) return JobId{0};
    return IoError("list " + jobs_dir + ": " + ErrnoText(errno));
  }
  JobId largest = 0;
  while (const dirent* entry = ::readdir(dir)) {
    JobId id = ParseId(entry->d_name);
    if (id > largest) largest = id;
  }
  ::closedir(dir);
  return largest;
}

}  // namespace pinpoint::store
