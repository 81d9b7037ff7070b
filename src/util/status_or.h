// StatusOr<T>: a value or the Status that says why there is none.
#ifndef MIGSERVE_UTIL_STATUS_OR_H_
#define MIGSERVE_UTIL_STATUS_OR_H_

#include <cassert>
#include <optional>
#include <utility>

#include "util/status.h"

namespace migserve {

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  // REQUIRES: !status.ok()
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT
    assert(!status_.ok());
  }
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  // REQUIRES: ok()
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T& value() & {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
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
