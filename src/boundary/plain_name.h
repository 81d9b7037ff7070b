// The one rule for the names migserve copies from its inputs into what it
// writes (docs/formats.md, "Names"): a service's name and a DNN model's name
// become Kubernetes label values, object names, nginx upstreams and
// locations, and paths. A plain name is what all of them take unquoted: 1 to
// 63 letters, digits, '-', '_' or '.', starting and ending with a letter or
// digit (a Kubernetes label value). Every boundary where a name enters
// (workload, profile CSV, deployment, the proxy's routes) checks it here, so
// nothing else has to quote or escape one: no ';', '{', '$', quote, space,
// newline or NUL can reach nginx.conf or a manifest.
#ifndef MIGSERVE_BOUNDARY_PLAIN_NAME_H_
#define MIGSERVE_BOUNDARY_PLAIN_NAME_H_

#include <string>
#include <string_view>

namespace migserve {

inline constexpr int kMaxPlainName = 63;

constexpr bool IsAsciiAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9');
}

// constexpr: a key of the code is checked by it when compiled
// (kube/labels.h).
constexpr bool IsPlainName(std::string_view name) {
  if (name.empty() || name.size() > kMaxPlainName) return false;
  if (!IsAsciiAlnum(name.front()) || !IsAsciiAlnum(name.back())) return false;
  for (char c : name) {
    if (!IsAsciiAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// "" if `name` is plain, else why not, for an error message: "must be 1 to
// 63 letters, ... got '<name>'" (the name shown escaped and cut short).
std::string PlainNameProblem(std::string_view name);

// Kubernetes object names (a DNS subdomain, RFC 1123): nodes as
// deployments and inventories give them, a Gateway a serving spec names.
inline constexpr int kMaxObjectName = 253;

constexpr bool IsObjectName(std::string_view name) {
  auto lower = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  };
  if (name.empty() || name.size() > kMaxObjectName) return false;
  if (!lower(name.front()) || !lower(name.back())) return false;
  for (char c : name) {
    if (!lower(c) && c != '-' && c != '.') return false;
  }
  return true;
}

// "" if `name` can be a Kubernetes object name, else why not (as above).
std::string ObjectNameProblem(std::string_view name);

// A name a model server answers to (vLLM's --served-model-name, the body's
// `model`): a plain name, or a checkpoint id as Hugging Face spells it
// ("meta-llama/Llama-3.1-8B-Instruct"): 1 to 128 letters, digits, '-', '_'
// or '.', with at most one '/' between two such parts; each part starts and
// ends with a letter or digit. Nothing in it needs quoting in nginx.conf, a
// manifest or a regular expression but '.'.
inline constexpr int kMaxServedName = 128;

constexpr bool IsServedName(std::string_view name) {
  if (name.empty() || name.size() > kMaxServedName) return false;
  size_t slash = name.find('/');
  auto part = [](std::string_view p) {
    if (p.empty() || !IsAsciiAlnum(p.front()) || !IsAsciiAlnum(p.back())) {
      return false;
    }
    for (char c : p) {
      if (!IsAsciiAlnum(c) && c != '-' && c != '_' && c != '.') return false;
    }
    return true;
  };
  if (slash == std::string_view::npos) return part(name);
  return part(name.substr(0, slash)) && part(name.substr(slash + 1));
}

// "" if `name` is a served name, else why not (as above).
std::string ServedNameProblem(std::string_view name);

// "" if `word` holds no whitespace and no control character (an image
// reference, a service account), else "must not hold spaces or control
// characters".
std::string WordProblem(std::string_view word);

// `text` with every control character but newline and tab shown as \xNN:
// what a message may print of text from outside, so that no name in a file
// (an escape sequence, a carriage return, a NUL) can drive the terminal.
std::string Printable(std::string_view text);

// 8 hex digits of a hash of `text`, the same on every platform.
std::string ShortHash(std::string_view text);

// Returns `text` as a DNS-1123 label (lowercase alphanumerics and '-', at
// most 63 characters; longer names keep a hash of the whole).
std::string DnsLabel(std::string_view text);

}  // namespace migserve

#endif  // MIGSERVE_BOUNDARY_PLAIN_NAME_H_
