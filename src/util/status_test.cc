#include "util/status.h"

#include <gtest/gtest.h>

#include "util/status_or.h"

namespace migserve {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return Status::InvalidArgument("odd");
  return x / 2;
}

Status Quarter(int x, int* out) {
  MIGSERVE_ASSIGN_OR_RETURN(int h, Half(x));
  MIGSERVE_ASSIGN_OR_RETURN(*out, Half(h));
  return Status::Ok();
}

TEST(StatusTest, PrefixKeepsCode) {
  Status s = Status::NotFound("no such GPU").WithPrefix("w.yaml:3: gpu");
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_EQ(s.message(), "w.yaml:3: gpu: no such GPU");
  EXPECT_EQ(s.ToString(), "not found: w.yaml:3: gpu: no such GPU");
  EXPECT_TRUE(Status::Ok().WithPrefix("x").ok());
}

TEST(StatusOrTest, PropagatesFirstError) {
  int out = 0;
  EXPECT_TRUE(Quarter(8, &out).ok());
  EXPECT_EQ(out, 2);
  Status s = Quarter(6, &out);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "odd");
}

TEST(StatusOrTest, ReadingTheValueOfAnErrorAbortsNamingIt) {
  StatusOr<int> missing = Status::NotFound("no such GPU");
  EXPECT_DEATH((void)missing.value(), "value of an error read: .*no such GPU");
  StatusOr<int> from_ok = Status::Ok();
  EXPECT_FALSE(from_ok.ok());
}

}  // namespace
}  // namespace migserve
