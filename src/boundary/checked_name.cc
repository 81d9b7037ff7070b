#include "boundary/checked_name.h"

#include <fmt/format.h>

#include <cstdlib>

namespace migserve {

std::string ConfigWordRule::Problem(std::string_view s) {
  if (s.size() > 4096) return "must be at most 4096 characters";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f ||
        std::string_view(";{}\"'$#\\").find(c) != std::string_view::npos) {
      return fmt::format(
          "must hold no space, control character or any of ; {{ }} \" ' $ # "
          "\\, got {:?}",
          std::string(s.substr(0, 80)));
    }
  }
  return "";
}

ObjectName ObjectLabel(std::string_view text) {
  StatusOr<ObjectName> name = ObjectName::Parse(DnsLabel(text));
  // DnsLabel gives 1 to 63 lowercase letters, digits and inner '-': a
  // label is always an object name. Anything else is a broken DnsLabel.
  if (!name.ok()) std::abort();
  return *std::move(name);
}

}  // namespace migserve
