#include "queueing/credit_cache.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "queueing/p99_capacity.h"
#include "util/test_util.h"

namespace migserve::queueing {
namespace {

// Values are kept per build: another build neither reads them nor keeps
// them once it writes its own.
TEST(CreditCacheTest, KeepsValuesPerBuild) {
  std::string path = testing::TempDir() + "/credit-cache/credits.db";
  std::remove(path.c_str());
  {
    CreditCache cache(path, "b1", nullptr);
    EXPECT_FALSE(cache.Find("k"));
    cache.Add("k", 12.5);
    cache.Add("j", 0);
    EXPECT_EQ(cache.Find("k"), 12.5);  // at once, before the flush
  }
  {
    CreditCache cache(path, "b1", nullptr);
    EXPECT_EQ(cache.Find("k"), 12.5);
    EXPECT_EQ(cache.Find("j"), 0.0);
    EXPECT_EQ(cache.hits(), 2);
  }
  {
    CreditCache other(path, "b2", nullptr);
    EXPECT_FALSE(other.Find("k"));
    other.Add("k", 3);
  }
  CreditCache again(path, "b1", nullptr);
  EXPECT_FALSE(again.Find("k"));
  EXPECT_EQ(CreditCache(path, "b2", nullptr).Find("k"), 3.0);
}

// A file that cannot be made warns once, and the cache keeps nothing; a
// build without an id keeps nothing, silently.
TEST(CreditCacheTest, ACacheThatCannotBeOpenedIsNotUsed) {
  std::vector<std::string> warnings;
  CreditCache cache("/proc/no-such-folder/credits.db", "b1",
                    [&](const std::string& w) { warnings.push_back(w); });
  cache.Add("k", 1);
  EXPECT_FALSE(cache.Find("k"));
  cache.Flush();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("credit cache /proc/no-such-folder/credits.db"),
            std::string::npos)
      << warnings[0];
  std::string path = testing::TempDir() + "/credit-cache-no-build.db";
  std::remove(path.c_str());
  {
    CreditCache nameless(path, "", nullptr);
    nameless.Add("k", 1);
    EXPECT_FALSE(nameless.Find("k"));
  }
  EXPECT_FALSE(std::fopen(path.c_str(), "r"));
}

// Runs `sql` on the cache file at `path`, as someone editing it would.
void Edit(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
}

// A credit multiplied by 10 in the file, or one no search gives (1e308),
// is refused and said once; the untouched rows are read. The folder a
// cache makes is the user's alone, and so is its key.
TEST(CreditCacheTest, AnEditedOrAbsurdValueIsRefused) {
  const std::string folder = testing::TempDir() + "/credit-cache-edited";
  std::filesystem::remove_all(folder);
  const std::string path = folder + "/credits.db";
  std::vector<std::string> said;
  auto warn = [&](const std::string& w) { said.push_back(w); };
  {
    CreditCache cache(path, "b1", warn);
    cache.Add("qa", 100);
    cache.Add("qb", 200);
    cache.Add("absurd", 1e308);
  }
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0], fmt::format("credit cache: made {} (mode 0700) for {}",
                                 folder, path));
  EXPECT_EQ(std::filesystem::status(folder).permissions(),
            std::filesystem::perms::owner_all);
  EXPECT_EQ(
      std::filesystem::status(path + ".key").permissions(),
      std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  Edit(path, "UPDATE signed_credit SET value = value * 10 WHERE key = 'qa'");
  said.clear();
  CreditCache cache(path, "b1", warn);
  EXPECT_FALSE(cache.Find("qa"));
  EXPECT_FALSE(cache.Find("absurd"));
  EXPECT_EQ(cache.Find("qb"), 200.0);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0], fmt::format("credit cache {}: 2 rows refused (a value "
                                 "outside 0 to 1e+09, or a digest that does "
                                 "not match: edited); computed again",
                                 path));
  // A row forged with another key is refused too.
  Edit(path, "INSERT OR REPLACE INTO signed_credit VALUES ('b1', 'qc', 5, '" +
                 std::string(64, '0') + "')");
  EXPECT_FALSE(CreditCache(path, "b1", nullptr).Find("qc"));
}

// QuantileCapacity keeps its answer in the process's cache, under a key
// that names its inputs.
TEST(CreditCacheTest, QuantileCapacityKeepsItsAnswers) {
  std::string path = testing::TempDir() + "/credit-cache-search.db";
  std::remove(path.c_str());
  CreditCache cache(path, "b1", nullptr);
  SetCreditCache(&cache);
  BatchCurve curve({{1, 4.0}, {4, 9.0}});
  QuantileSearch search;
  search.requests = 20000;  // a search no other test asks for
  double credit = QuantileCapacity(curve, {.max_batch = 4}, 40, {}, search);
  SetCreditCache(nullptr);
  cache.Flush();
  EXPECT_GT(credit, 0);
  CreditCache reread(path, "b1", nullptr);
  // The key names the curve's points, batch, SLO and the search.
  std::optional<double> kept = reread.Find(
      "c 1:0x1p+2 4:0x1.2p+3 b4 w1 d0x0p+0 s0x1.4p+5 q0x1.fae147ae147aep-1 "
      "n20000 u0x1.999999999999ap-4 t0x1.0624dd2f1a9fcp-8 r0x0p+0 "
      "c0x1p+0 proxy x1 @0x0p+0");
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(*kept, credit);
}

}  // namespace
}  // namespace migserve::queueing
