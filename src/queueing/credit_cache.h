// p99 credits computed by earlier runs, kept in a SQLite file so that a
// second optimize of a fleet starts solving at once (docs/capacity.md,
// "Credits once"). Each value is keyed by every input of the search that
// made it (the replica's batch curve, batcher, SLO, the search's settings
// and the traffic; for a verdict also the rate) and by the build that
// computed it (BuildId()), so a value is reused only by the same code for
// the same question: a run with the cache computes the credits a run
// without it does, bit for bit. New values are written in one transaction
// by Flush (and the destructor), which also drops the rows of other
// builds. A cache that cannot be opened or written says so once through
// `warn` and is not used again; the work is then done as without it. Each
// row carries a keyed digest (credit_digest.h): a row edited outside
// migserve, or holding a value no search gives, is refused and computed
// again, and `warn` says how many.
#ifndef MIGSERVE_QUEUEING_CREDIT_CACHE_H_
#define MIGSERVE_QUEUEING_CREDIT_CACHE_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "boundary/number.h"
#include "queueing/credit_digest.h"
#include "util/mutex.h"

struct sqlite3;

namespace migserve::queueing {

// What a cached value can be: a p99 credit (req/s) or a verdict (0 or 1).
inline constexpr NumberRange kCachedRange{0, kRateRange.max};

class CreditCache {
 public:
  using Warn = std::function<void(const std::string&)>;
  // Opens `path` (creating it and its folder) at the first Find; `build`
  // names the code whose values it keeps ("" : none are kept).
  CreditCache(std::string path, std::string build, Warn warn);
  ~CreditCache();
  CreditCache(const CreditCache&) = delete;
  CreditCache& operator=(const CreditCache&) = delete;

  std::optional<double> Find(const std::string& key);
  void Add(const std::string& key, double value);
  // Writes the values added since the last flush.
  void Flush();

  int hits() const;

 private:
  // Opens the file and reads this build's values; false (after a warning)
  // if it cannot.
  bool Open() REQUIRES(mu_);
  // Makes the cache's folder if there is none, mode 0700, and says so.
  void MakeFolder() REQUIRES(mu_);
  // Reads this build's rows, refusing (and naming once) those out of
  // kCachedRange or whose digest does not match.
  bool ReadRows() REQUIRES(mu_);
  void Disable(const std::string& what) REQUIRES(mu_);

  std::string path_;
  std::string build_;
  Warn warn_;
  mutable Mutex mu_;
  bool tried_ GUARDED_BY(mu_) = false;
  sqlite3* db_ GUARDED_BY(mu_) = nullptr;
  std::optional<CreditDigest> digest_ GUARDED_BY(mu_);
  std::map<std::string, double> values_ GUARDED_BY(mu_);
  std::vector<std::pair<std::string, double>> added_ GUARDED_BY(mu_);
  int hits_ GUARDED_BY(mu_) = 0;
};

// The process's cache, which QuantileCapacity and QuantileHolds consult:
// null (the default) for none. Not owned.
void SetCreditCache(CreditCache* cache);
CreditCache* GetCreditCache();

// Makes `cache` the process's cache (null: none) for its lifetime, then
// gives back the one before.
class ScopedCreditCache {
 public:
  explicit ScopedCreditCache(CreditCache* cache) : before_(GetCreditCache()) {
    SetCreditCache(cache);
  }
  ~ScopedCreditCache() { SetCreditCache(before_); }
  ScopedCreditCache(const ScopedCreditCache&) = delete;
  ScopedCreditCache& operator=(const ScopedCreditCache&) = delete;

 private:
  CreditCache* before_;
};

// Where the migserve program keeps its cache: $MIGSERVE_CREDIT_CACHE if
// set ("" or "off": nowhere), else $XDG_CACHE_HOME/migserve/credits.db,
// else $HOME/.cache/migserve/credits.db; "" for nowhere.
std::string DefaultCreditCachePath();

}  // namespace migserve::queueing

#endif  // MIGSERVE_QUEUEING_CREDIT_CACHE_H_
