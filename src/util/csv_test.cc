#include "util/csv.h"

#include <gtest/gtest.h>

namespace migserve {
namespace {

TEST(CsvTest, SplitsTrimsAndSkipsBlankLines) {
  auto records = ParseCsv("a, b ,c\r\n\n\"x,y\",\"say \"\"hi\"\"\",\n");
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].line, 1);
  EXPECT_EQ((*records)[0].fields, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ((*records)[1].line, 3);
  EXPECT_EQ((*records)[1].fields,
            (std::vector<std::string>{"x,y", "say \"hi\"", ""}));
}

TEST(CsvTest, RejectsUnterminatedQuote) {
  auto records = ParseCsv("a,b\n\"oops,c\n");
  ASSERT_FALSE(records.ok());
  EXPECT_EQ(records.status().message(), "line 2: unterminated quoted field");
}

TEST(CsvTest, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(CsvField("resnet50"), "resnet50");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("q\"t"), "\"q\"\"t\"");
}

}  // namespace
}  // namespace migserve
