#include "boundary/csv_file.h"

#include <gtest/gtest.h>

namespace migserve {
namespace {

TEST(CsvFileTest, ColumnsAreFoundByHeaderWhereverTheyStand) {
  auto f = CsvFile::Parse("b,a\n2,x\n3.5,y\n", "t.csv");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->Find("a"), 1);
  EXPECT_EQ(f->Find("c"), -1);
  std::span<const CsvRecord> rows = f->Rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(f->Field(rows[0], 1), "x");
  EXPECT_EQ(f->Field(rows[0], -1), "");
  EXPECT_EQ(f->Count(rows[0], 0).value(), 2);
  EXPECT_DOUBLE_EQ(f->Number(rows[1], 0).value(), 3.5);
}

TEST(CsvFileTest, ErrorsNameFileLineAndColumn) {
  auto f = CsvFile::Parse("b,a\n-1,x\n", "t.csv");
  ASSERT_TRUE(f.ok());
  CsvRecord row = f->Rows()[0];
  EXPECT_EQ(f->Number(row, 0).status().message(),
            "t.csv:2: b: must be from 0 to 1e+15, got -1");
  EXPECT_EQ(f->Number(row, 1).status().message(),
            "t.csv:2: a: not a finite number: 'x'");
  EXPECT_EQ(f->Count(row, 0).status().message(),
            "t.csv:2: b: must be a positive integer, got '-1'");
  EXPECT_EQ(f->Require("c").status().message(),
            "t.csv:1: header: missing column 'c' (has: b, a)");
}

TEST(CsvFileTest, EmptyFileAndWrongSeparatorAreNamed) {
  EXPECT_EQ(CsvFile::Parse("", "t.csv").status().message(),
            "t.csv:1: header: missing");
  EXPECT_EQ(CsvFile::Parse("a;b\n1;2\n", "t.csv").status().message(),
            "t.csv:1: header: fields are separated by ';'; CSV files are "
            "comma-separated");
  EXPECT_EQ(CsvFile::Parse("a\tb\n", "t.csv").status().message(),
            "t.csv:1: header: fields are separated by '\\t'; CSV files are "
            "comma-separated");
}

// A column headed twice would be read from its first place only, and a row
// of another width has its fields under the wrong headers: both refused.
TEST(CsvFileTest, AColumnTwiceAndARaggedRowAreRefused) {
  EXPECT_EQ(CsvFile::Parse("a,b,a\n1,2,3\n", "f.csv").status().message(),
            "f.csv:1: header: column 'a' given twice");
  EXPECT_EQ(CsvFile::Parse("a,b\n1,2\n1,2,3\n", "f.csv").status().message(),
            "f.csv:3: row: has 3 fields, the header has 2");
  EXPECT_EQ(CsvFile::Parse("a,b\n1\n", "f.csv").status().message(),
            "f.csv:2: row: has 1 fields, the header has 2");
  EXPECT_TRUE(CsvFile::Parse("a,b\n1,\n", "f.csv").ok());
}

}  // namespace
}  // namespace migserve
