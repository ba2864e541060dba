//===- Status.h - Error values of the Kiln runtime -------------*- C++ -*-===//
//
// This file declares Status and Expected<T>, the error model of the runtime:
// no exceptions cross the runtime's boundaries; every fallible call returns a
// Status that carries a human-readable message naming what failed and what
// to do about it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_STATUS_H
#define KILN_RUNTIME_STATUS_H

#include <cassert>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

namespace kiln {

/// The result of a fallible runtime operation: success, or an error message.
class [[nodiscard]] Status {
public:
  Status() = default;
  /// Returns the success value.
  static Status ok() { return Status(); }
  /// Returns an error with the given message.
  static Status error(std::string message) {
    Status s;
    s.failed_ = true;
    s.message_ = std::move(message);
    return s;
  }
  bool isOk() const { return !failed_; }
  explicit operator bool() const { return isOk(); }
  const std::string &message() const { return message_; }
  /// Prefixes the message with context ("node 'x': ...").
  Status withContext(const std::string &context) const {
    if (isOk())
      return *this;
    return error(context + ": " + message_);
  }

private:
  bool failed_ = false;
  std::string message_;
};

/// A value or an error.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : value_(std::move(value)) {}
  Expected(Status status) : status_(std::move(status)) {
    assert(!status_.isOk() && "Expected built from a success status");
  }
  bool isOk() const { return value_.has_value(); }
  explicit operator bool() const { return isOk(); }
  const Status &status() const { return status_; }
  T &operator*() { return *value_; }
  const T &operator*() const { return *value_; }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }
  T take() { return std::move(*value_); }

private:
  std::optional<T> value_;
  Status status_;
};

/// Builds a message from streamable pieces: strCat("axis ", 3, " out of
/// range").
template <typename... Args> std::string strCat(const Args &...args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

} // namespace kiln

/// Returns an error Status built from the streamed pieces when COND is false.
#define KILN_CHECK(cond, ...)                                                  \
  do {                                                                         \
    if (!(cond))                                                               \
      return ::kiln::Status::error(::kiln::strCat(__VA_ARGS__));               \
  } while (0)

/// Propagates an error Status.
#define KILN_RETURN_IF_ERROR(expr)                                             \
  do {                                                                         \
    ::kiln::Status _kiln_status = (expr);                                      \
    if (!_kiln_status.isOk())                                                  \
      return _kiln_status;                                                     \
  } while (0)

#endif // KILN_RUNTIME_STATUS_H
