#include "util/status.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "util/status_or.h"

namespace migserve {
namespace {

const char* CodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk:
      return "OK";
    case Status::Code::kInvalidArgument:
      return "invalid argument";
    case Status::Code::kNotFound:
      return "not found";
    case Status::Code::kFailedPrecondition:
      return "failed precondition";
    case Status::Code::kUnavailable:
      return "unavailable";
    case Status::Code::kAborted:
      return "aborted";
    case Status::Code::kDeadlineExceeded:
      return "deadline exceeded";
    case Status::Code::kInternal:
      return "internal";
  }
  return "unknown";
}

}  // namespace

Status Status::WithPrefix(std::string_view prefix) const {
  if (ok()) return *this;
  return Status(code_, std::string(prefix) + ": " + message_);
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(code_)) + ": " + message_;
}

void DieOnBadAccess(const Status& status) {
  std::fprintf(stderr, "migserve: value of an error read: %s\n",
               status.ToString().c_str());
  std::abort();
}

}  // namespace migserve
