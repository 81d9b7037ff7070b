#include "boundary/plain_name.h"

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

// Node and Gateway names: RFC 1123 subdomains, up to 253 characters.
TEST(PlainNameTest, ObjectNamesAreDnsSubdomains) {
  for (const std::string& good :
       {std::string("node-1"), std::string("ip-10-0-0-1.ec2.internal"),
        std::string(253, 'a')}) {
    EXPECT_EQ(ObjectNameProblem(good), "") << good;
  }
  for (const std::string& bad :
       {std::string(""), std::string("Node-1"), std::string("a_b"),
        std::string("-a"), std::string("a."), std::string("a\nb"),
        std::string(254, 'a')}) {
    EXPECT_NE(ObjectNameProblem(bad), "") << bad;
  }
  EXPECT_EQ(ObjectNameProblem("a\x1b"),
            "must be a Kubernetes object name: 1 to 253 lower-case letters, "
            "digits, '-' or '.', starting and ending with a letter or digit, "
            "got 'a\\x1b'");
}

// What a language model's replica answers to: a plain name or a Hugging
// Face id, with nothing a regular expression or nginx.conf reads but '.'.
TEST(PlainNameTest, ServedNamesAreWordsOrHuggingFaceIds) {
  for (const std::string& good :
       {std::string("chat-a"), std::string("meta-llama/Llama-3.1-8B-Instruct"),
        std::string("Qwen/Qwen2.5-7B"), std::string(128, 'a')}) {
    EXPECT_EQ(ServedNameProblem(good), "") << good;
  }
  for (const std::string& bad :
       {std::string(""), std::string("a/b/c"), std::string("/a"),
        std::string("a/"), std::string("a b"), std::string("a$"),
        std::string("a|b"), std::string("a(b)"), std::string("a+b"),
        std::string("a\\"), std::string("a\""), std::string("-a"),
        std::string(129, 'a')}) {
    EXPECT_NE(ServedNameProblem(bad), "") << bad;
  }
  EXPECT_EQ(ServedNameProblem("a b"),
            "must be 1 to 128 letters, digits, '-', '_' or '.', with at most "
            "one '/' between two parts that each start and end with a letter "
            "or digit, got 'a b'");
}

// An image reference or an account name: one word, no control character.
TEST(PlainNameTest, AWordHoldsNoSpaceOrControlCharacter) {
  EXPECT_EQ(WordProblem("nvcr.io/nvidia/tritonserver:24.08-py3"), "");
  for (const char* bad : {"a b", "a\tb", "a\nb", "a\x1b[2J", "a\x7f"}) {
    EXPECT_EQ(WordProblem(bad), "must not hold spaces or control characters")
        << bad;
  }
}

// What a message may print of outside text: every control character but
// newline and tab escaped, the rest (UTF-8 included) as it is.
TEST(PlainNameTest, PrintableEscapesControlCharacters) {
  EXPECT_EQ(Printable(std::string("a\x1b[2Jb\r\0\x7f\n\tr\xc3\xa9", 14)),
            "a\\x1b[2Jb\\x0d\\x00\\x7f\n\tr\xc3\xa9");
  EXPECT_EQ(Printable("plain text"), "plain text");
}

}  // namespace
}  // namespace migserve
