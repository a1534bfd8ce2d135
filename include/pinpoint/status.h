// Errors as values. A Status is ok or carries a code and one human-readable line.
// Result<T> holds either a T or a non-ok Status. Both are cheap to move.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace pinpoint {

enum class Code {
  kOk = 0,
  kInvalidArgument,     // bad input from a person or a client: exit code 2
  kNotFound,            // no such job, file, device
  kPermissionDenied,    // caller may not do this
  kUnavailable,         // daemon not reachable, device gone; may work later
  kFailedPrecondition,  // request can never be satisfied here (e.g. never fits this node)
  kIo,                  // filesystem, socket, SQLite errors
  kInternal,            // a bug
};

// Name of a code as used in JSON replies ("invalid_argument", ...).
const char* CodeName(Code code);
// Inverse of CodeName; unknown names map to kInternal.
Code CodeFromName(const std::string& name);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid_argument: <message>" or "ok".
  std::string ToString() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
inline Status PermissionDenied(std::string m) { return {Code::kPermissionDenied, std::move(m)}; }
inline Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
inline Status FailedPrecondition(std::string m) {
  return {Code::kFailedPrecondition, std::move(m)};
}
inline Status IoError(std::string m) { return {Code::kIo, std::move(m)}; }
inline Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }

// Either a value or an error Status. Accessing value() of an error is a bug (asserts).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!status_.ok());
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & {
    assert(ok());
    return *value_;
  }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace pinpoint

// Propagates a non-ok Status from an expression returning Status.
#define PP_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::pinpoint::Status pp_status_ = (expr);  \
    if (!pp_status_.ok()) return pp_status_; \
  } while (0)
