// StatusOr<T>: a value or the Status that says why there is none.
#ifndef MIGSERVE_UTIL_STATUS_OR_H_
#define MIGSERVE_UTIL_STATUS_OR_H_

#include <optional>
#include <utility>

#include "util/status.h"

namespace migserve {

// Prints `status` to stderr and aborts: reading the value of an error is a
// bug in the caller, stopped in every build (not only with assertions on).
[[noreturn]] void DieOnBadAccess(const Status& status);

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  // REQUIRES: !status.ok()
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) {
      status_ = Status::Internal("StatusOr made from an OK status");
    }
  }
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  // Aborts with the status's message unless ok().
  const T& value() const& {
    if (!ok()) DieOnBadAccess(status_);
    return *value_;
  }
  T& value() & {
    if (!ok()) DieOnBadAccess(status_);
    return *value_;
  }
  T&& value() && {
    if (!ok()) DieOnBadAccess(status_);
    return std::move(*value_);
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace migserve

#define MIGSERVE_CONCAT_INNER(a, b) a##b
#define MIGSERVE_CONCAT(a, b) MIGSERVE_CONCAT_INNER(a, b)
#define MIGSERVE_ASSIGN_OR_RETURN(lhs, expr) \
  MIGSERVE_ASSIGN_OR_RETURN_IMPL(MIGSERVE_CONCAT(_so_, __LINE__), lhs, expr)
#define MIGSERVE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()

#endif  // MIGSERVE_UTIL_STATUS_OR_H_
