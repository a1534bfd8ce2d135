#include "pinpoint/status.h"

namespace pinpoint {

namespace {
struct CodeEntry {
  Code code;
  const char* name;
};
constexpr CodeEntry kCodes[] = {
    {Code::kOk, "ok"},
    {Code::kInvalidArgument, "invalid_argument"},
    {Code::kNotFound, "not_found"},
    {Code::kPermissionDenied, "permission_denied"},
    {Code::kUnavailable, "unavailable"},
    {Code::kFailedPrecondition, "failed_precondition"},
    {Code::kIo, "io"},
    {Code::kInternal, "internal"},
};
}  // namespace

const char* CodeName(Code code) {
  for (const auto& e : kCodes) {
    if (e.code == code) return e.name;
  }
  return "internal";
}

Code CodeFromName(const std::string& name) {
  for (const auto& e : kCodes) {
    if (name == e.name) return e.code;
  }
  return Code::kInternal;
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(CodeName(code_)) + ": " + message_;
}

}  // namespace pinpoint
