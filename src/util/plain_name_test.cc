#include "util/plain_name.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace migserve {
namespace {

TEST(PlainNameTest, TakesLabelValuesOnly) {
  for (const char* ok : {"bert", "resnet50", "bert-large_v2.onnx", "a", "9"}) {
    EXPECT_TRUE(IsPlainName(ok)) << ok;
    EXPECT_EQ(PlainNameProblem(ok), "");
  }
  EXPECT_TRUE(IsPlainName(std::string(63, 'a')));
  // What would break out of an nginx directive, a location or a YAML
  // scalar: none of it is a plain name. (A directive's word alone, such as
  // "include", is: it never stands where nginx reads a directive.)
  for (const std::string& bad : std::vector<std::string>{
           "", "a;b", "a}", "{a", "$host", "a\"b", "a'b", "a b", "a\nb",
           std::string("a\0b", 3), "-a", "a.", "/etc/passwd",
           "m/; } location / { alias /var/run/secrets/; } #",
           "bert; listen 0.0.0.0:9999", std::string(64, 'a'),
           std::string(300, 'x')}) {
    EXPECT_FALSE(IsPlainName(bad)) << bad;
    EXPECT_NE(PlainNameProblem(bad), "") << bad;
  }
  EXPECT_EQ(PlainNameProblem("a;b\n"),
            "must be 1 to 63 letters, digits, '-', '_' or '.', starting and "
            "ending with a letter or digit, got 'a;b\\x0a'");
  EXPECT_EQ(PlainNameProblem(std::string(300, 'x')),
            "must be 1 to 63 letters, digits, '-', '_' or '.', starting and "
            "ending with a letter or digit, got '" +
                std::string(40, 'x') + "... (300 characters)'");
}

}  // namespace
}  // namespace migserve
