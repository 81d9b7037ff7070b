#include "boundary/csv.h"

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

namespace migserve {
namespace {

TEST(CsvTest, ParsesWholeFieldsOnly) {
  double d = 0;
  int i = 0;
  EXPECT_TRUE(ParseDouble("0.013", &d));
  EXPECT_DOUBLE_EQ(d, 0.013);
  EXPECT_FALSE(ParseDouble("1.5x", &d));
  EXPECT_FALSE(ParseDouble("", &d));
  EXPECT_TRUE(ParseInt("256", &i));
  EXPECT_EQ(i, 256);
  EXPECT_FALSE(ParseInt("2.5", &i));
}

}  // namespace
}  // namespace migserve
