#include "boundary/plain_name.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace migserve {
namespace {

bool Control(char c) {
  auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

// `name` as a message shows it: control characters, bytes past ASCII and
// quotes escaped, at most 40 characters of it.
std::string Shown(std::string_view name) {
  std::string out;
  for (char c : name.substr(0, 40)) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\'' || c == '\\') {
      out += '\\';
      out += c;
    } else if (Control(c) || u >= 0x80) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  if (name.size() > 40) out += fmt::format("... ({} characters)", name.size());
  return out;
}

// FNV-1a: the same short hash on every platform, so names are stable.
uint32_t Fnv1a(std::string_view text) {
  uint32_t h = 2166136261u;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return h;
}

}  // namespace

std::string PlainNameProblem(std::string_view name) {
  if (IsPlainName(name)) return "";
  return fmt::format(
      "must be 1 to {} letters, digits, '-', '_' or '.', starting and ending "
      "with a letter or digit, got '{}'",
      kMaxPlainName, Shown(name));
}

std::string ServedNameProblem(std::string_view name) {
  if (IsServedName(name)) return "";
  return fmt::format(
      "must be 1 to {} letters, digits, '-', '_' or '.', with at most one "
      "'/' between two parts that each start and end with a letter or "
      "digit, got '{}'",
      kMaxServedName, Shown(name));
}

std::string ObjectNameProblem(std::string_view name) {
  if (IsObjectName(name)) return "";
  return fmt::format(
      "must be a Kubernetes object name: 1 to {} lower-case letters, digits, "
      "'-' or '.', starting and ending with a letter or digit, got '{}'",
      kMaxObjectName, Shown(name));
}

std::string WordProblem(std::string_view word) {
  bool ok = std::none_of(word.begin(), word.end(),
                         [](char c) { return Control(c) || c == ' '; });
  return ok ? "" : "must not hold spaces or control characters";
}

std::string Printable(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (Control(c) && c != '\n' && c != '\t') {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out;
}

std::string ShortHash(std::string_view text) {
  return fmt::format("{:08x}", Fnv1a(text));
}

std::string DnsLabel(std::string_view text) {
  std::string out;
  for (char c : text) {
    char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool ok = IsAsciiAlnum(lower);
    if (ok) {
      out += lower;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.empty()) out.push_back('x');
  constexpr size_t kMax = 63;
  if (out.size() > kMax) {
    std::string hash = ShortHash(text);
    out = out.substr(0, kMax - hash.size() - 1);
    while (out.back() == '-') out.pop_back();
    out.push_back('-');
    out.append(hash);
  }
  return out;
}

}  // namespace migserve
