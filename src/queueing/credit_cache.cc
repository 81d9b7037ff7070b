#include "queueing/credit_cache.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>

#include "boundary/number.h"

namespace migserve::queueing {
namespace {

std::atomic<CreditCache*> current{nullptr};

// Runs `sql`; returns SQLite's message on failure, "" on success.
std::string Exec(sqlite3* db, const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) == SQLITE_OK) {
    return "";
  }
  std::string text = message != nullptr ? message : sqlite3_errmsg(db);
  sqlite3_free(message);
  return text;
}

}  // namespace

CreditCache::CreditCache(std::string path, std::string build, Warn warn)
    : path_(std::move(path)),
      build_(std::move(build)),
      warn_(std::move(warn)) {}

CreditCache::~CreditCache() {
  Flush();
  sqlite3_close(db_);
}

void CreditCache::Disable(const std::string& what) {
  if (warn_) {
    warn_(fmt::format("credit cache {}: {}; computing credits without it",
                      path_, what));
  }
  sqlite3_close(db_);
  db_ = nullptr;
  added_.clear();
}

bool CreditCache::Open() {
  if (tried_) return db_ != nullptr;
  tried_ = true;
  if (path_.empty() || build_.empty()) return false;
  MakeFolder();
  StatusOr<CreditDigest> digest = CreditDigest::ForCache(path_);
  if (!digest.ok()) {
    Disable(digest.status().message());
    return false;
  }
  digest_.emplace(*std::move(digest));
  if (sqlite3_open(path_.c_str(), &db_) != SQLITE_OK) {
    Disable(sqlite3_errmsg(db_));
    return false;
  }
  sqlite3_busy_timeout(db_, 10000);
  // `credit`, the table of rows without a digest, is dropped.
  if (std::string e = Exec(db_,
                           "PRAGMA journal_mode=WAL;"
                           "DROP TABLE IF EXISTS credit;"
                           "CREATE TABLE IF NOT EXISTS signed_credit (build "
                           "TEXT NOT NULL, key TEXT NOT NULL, value REAL NOT "
                           "NULL, digest TEXT NOT NULL, PRIMARY KEY (build, "
                           "key));");
      !e.empty()) {
    Disable(e);
    return false;
  }
  return ReadRows();
}

void CreditCache::MakeFolder() {
  std::filesystem::path folder = std::filesystem::path(path_).parent_path();
  std::error_code error;
  if (folder.empty() || std::filesystem::exists(folder, error)) return;
  if (!std::filesystem::create_directories(folder, error)) return;
  std::filesystem::permissions(folder, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace, error);
  if (warn_) {
    warn_(fmt::format("credit cache: made {} (mode 0700) for {}",
                      folder.string(), path_));
  }
}

bool CreditCache::ReadRows() {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_,
                         "SELECT key, value, digest FROM signed_credit WHERE "
                         "build = ?",
                         -1, &stmt, nullptr) != SQLITE_OK) {
    Disable(sqlite3_errmsg(db_));
    return false;
  }
  sqlite3_bind_text(stmt, 1, build_.c_str(), -1, SQLITE_TRANSIENT);
  int step, refused = 0;
  while ((step = sqlite3_step(stmt)) == SQLITE_ROW) {
    const unsigned char* key = sqlite3_column_text(stmt, 0);
    const unsigned char* digest = sqlite3_column_text(stmt, 2);
    if (key == nullptr || digest == nullptr ||
        sqlite3_column_type(stmt, 1) != SQLITE_FLOAT) {
      ++refused;
      continue;
    }
    const std::string k = reinterpret_cast<const char*>(key);
    const double value = sqlite3_column_double(stmt, 1);
    if (!InRange(value, kCachedRange) ||
        digest_->Of(build_, k, value) !=
            reinterpret_cast<const char*>(digest)) {
      ++refused;
      continue;
    }
    values_[k] = value;
  }
  sqlite3_finalize(stmt);
  if (step != SQLITE_DONE) {
    values_.clear();
    Disable(sqlite3_errmsg(db_));
    return false;
  }
  if (refused > 0 && warn_) {
    warn_(fmt::format(
        "credit cache {}: {} rows refused (a value outside 0 to {:g}, or a "
        "digest that does not match: edited); computed again",
        path_, refused, kCachedRange.max));
  }
  return true;
}

std::optional<double> CreditCache::Find(const std::string& key) {
  MutexLock lock(&mu_);
  if (!Open()) return std::nullopt;
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  ++hits_;
  return it->second;
}

void CreditCache::Add(const std::string& key, double value) {
  MutexLock lock(&mu_);
  if (!Open()) return;
  if (values_.emplace(key, value).second) added_.emplace_back(key, value);
}

void CreditCache::Flush() {
  MutexLock lock(&mu_);
  if (db_ == nullptr || added_.empty()) return;
  if (std::string e = Exec(db_, "BEGIN IMMEDIATE"); !e.empty()) {
    Disable(e);
    return;
  }
  sqlite3_stmt* drop = nullptr;
  sqlite3_stmt* insert = nullptr;
  bool ok =
      sqlite3_prepare_v2(db_, "DELETE FROM signed_credit WHERE build != ?", -1,
                         &drop, nullptr) == SQLITE_OK &&
      sqlite3_prepare_v2(db_,
                         "INSERT OR REPLACE INTO signed_credit VALUES (?, ?, "
                         "?, ?)",
                         -1, &insert, nullptr) == SQLITE_OK;
  if (ok) {
    sqlite3_bind_text(drop, 1, build_.c_str(), -1, SQLITE_TRANSIENT);
    ok = sqlite3_step(drop) == SQLITE_DONE;
  }
  for (size_t i = 0; ok && i < added_.size(); ++i) {
    sqlite3_reset(insert);
    sqlite3_bind_text(insert, 1, build_.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(insert, 2, added_[i].first.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(insert, 3, added_[i].second);
    const std::string digest =
        digest_->Of(build_, added_[i].first, added_[i].second);
    sqlite3_bind_text(insert, 4, digest.c_str(), -1, SQLITE_TRANSIENT);
    ok = sqlite3_step(insert) == SQLITE_DONE;
  }
  std::string failure = ok ? "" : sqlite3_errmsg(db_);
  sqlite3_finalize(drop);
  sqlite3_finalize(insert);
  if (ok) failure = Exec(db_, "COMMIT");
  if (!failure.empty()) {
    Exec(db_, "ROLLBACK");
    Disable(failure);
    return;
  }
  added_.clear();
}

int CreditCache::hits() const {
  MutexLock lock(&mu_);
  return hits_;
}

void SetCreditCache(CreditCache* cache) { current.store(cache); }

CreditCache* GetCreditCache() { return current.load(); }

std::string DefaultCreditCachePath() {
  if (const char* set = std::getenv("MIGSERVE_CREDIT_CACHE")) {
    std::string path = set;
    return path == "off" ? "" : path;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return std::string(xdg) + "/migserve/credits.db";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::string(home) + "/.cache/migserve/credits.db";
  }
  return "";
}

}  // namespace migserve::queueing
