// Status and StatusOr: how a call reports failure (leveldb's Status). What a
// solve found (optimal, feasible, ...) is a result, not a Status.
#ifndef MIGSERVE_UTIL_STATUS_H_
#define MIGSERVE_UTIL_STATUS_H_

#include <string>
#include <string_view>

namespace migserve {

class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk,
    kInvalidArgument,     // bad input: a file, a flag, a field
    kNotFound,            // a named file, GPU, model or profile is absent
    kFailedPrecondition,  // a valid question whose answer is "no"
    kUnavailable,
    kAborted,
    kDeadlineExceeded,
    kInternal,
  };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) {
    return Status(Code::kInvalidArgument, std::move(msg));
  }
  static Status NotFound(std::string msg) {
    return Status(Code::kNotFound, std::move(msg));
  }
  static Status FailedPrecondition(std::string msg) {
    return Status(Code::kFailedPrecondition, std::move(msg));
  }
  static Status Unavailable(std::string msg) {
    return Status(Code::kUnavailable, std::move(msg));
  }
  static Status Aborted(std::string msg) {
    return Status(Code::kAborted, std::move(msg));
  }
  static Status DeadlineExceeded(std::string msg) {
    return Status(Code::kDeadlineExceeded, std::move(msg));
  }
  static Status Internal(std::string msg) {
    return Status(Code::kInternal, std::move(msg));
  }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a status with the same code and "prefix: message".
  Status WithPrefix(std::string_view prefix) const;

  // Returns "OK" or "<code name>: <message>".
  std::string ToString() const;

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace migserve

#define MIGSERVE_RETURN_IF_ERROR(expr) \
  do {                                 \
    ::migserve::Status _st = (expr);   \
    if (!_st.ok()) return _st;         \
  } while (0)

#endif  // MIGSERVE_UTIL_STATUS_H_
