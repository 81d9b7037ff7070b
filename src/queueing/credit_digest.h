// A keyed digest of each row of the credit cache (credit_cache.h), so that
// an edited value is noticed instead of believed: HMAC-SHA256 over the
// row's build, key and value with a secret kept beside the cache (PATH.key,
// mode 0600, 32 random bytes made at its first use). Someone who can read
// the key can forge rows; someone who can only edit the database cannot.
#ifndef MIGSERVE_QUEUEING_CREDIT_DIGEST_H_
#define MIGSERVE_QUEUEING_CREDIT_DIGEST_H_

#include <string>

#include "util/status_or.h"

namespace migserve::queueing {

class CreditDigest {
 public:
  // Reads the key of the cache at `cache_path` (its path + ".key"), making
  // it first if there is none. Returns Unavailable naming the file if it
  // cannot be read or made, or holds no 64 hex digits.
  static StatusOr<CreditDigest> ForCache(const std::string& cache_path);

  // 64 hex digits of the row's digest.
  std::string Of(const std::string& build, const std::string& key,
                 double value) const;

 private:
  explicit CreditDigest(std::string secret) : secret_(std::move(secret)) {}

  std::string secret_;  // 32 bytes
};

}  // namespace migserve::queueing

#endif  // MIGSERVE_QUEUEING_CREDIT_DIGEST_H_
