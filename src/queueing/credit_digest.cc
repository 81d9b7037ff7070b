#include "queueing/credit_digest.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "boundary/input_file.h"

namespace migserve::queueing {
namespace {

constexpr size_t kSecretBytes = 32;

// A table, not a format per byte: the cache signs a million rows at a
// region's scale.
std::string Hex(const unsigned char* bytes, size_t size) {
  constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * size);
  for (size_t i = 0; i < size; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 0xf];
  }
  return out;
}

// Makes `path` with a new secret, mode 0600, unless it exists.
Status MakeKey(const std::string& path) {
  unsigned char secret[kSecretBytes];
  if (RAND_bytes(secret, sizeof secret) != 1) {
    return Status::Unavailable(path + ": no random bytes for a new key");
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return Status::Ok();  // another run made it
    return Status::Unavailable(
        fmt::format("{}: cannot create: {}", path, std::strerror(errno)));
  }
  std::string text = Hex(secret, sizeof secret) + "\n";
  bool written = ::write(fd, text.data(), text.size()) ==
                 static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written) {
    ::unlink(path.c_str());
    return Status::Unavailable(path + ": cannot write the new key");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<CreditDigest> CreditDigest::ForCache(const std::string& cache_path) {
  const std::string path = cache_path + ".key";
  MIGSERVE_RETURN_IF_ERROR(MakeKey(path));
  StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return Status::Unavailable(text.status().message());
  std::string hex = text->substr(0, text->find('\n'));
  if (hex.size() != 2 * kSecretBytes ||
      hex.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return Status::Unavailable(path + ": not a key (64 hex digits)");
  }
  std::string secret;
  for (size_t i = 0; i < hex.size(); i += 2) {
    secret += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return CreditDigest(std::move(secret));
}

std::string CreditDigest::Of(const std::string& build, const std::string& key,
                             double value) const {
  // The fields, each ended by a NUL (none holds one), the value exactly.
  const std::string message =
      build + '\0' + key + '\0' + fmt::format("{:a}", value);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(),
       digest, &size);
  return Hex(digest, size);
}

}  // namespace migserve::queueing
