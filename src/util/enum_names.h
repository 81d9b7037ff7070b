// The names of an enum's values in one table per enum, read both ways: the
// name of a value, and the value of a name. Replaces a switch per enum that
// repeats its cases in every direction.
#ifndef MIGSERVE_UTIL_ENUM_NAMES_H_
#define MIGSERVE_UTIL_ENUM_NAMES_H_

#include <cstddef>
#include <optional>
#include <string_view>

namespace migserve {

template <typename E>
struct EnumName {
  E value;
  std::string_view name;  // a literal: its data() is NUL-terminated
};

// Returns the name of `value` in `table`, or "?" if it has none.
template <typename E, size_t N>
constexpr std::string_view NameOf(const EnumName<E> (&table)[N], E value) {
  for (const EnumName<E>& e : table) {
    if (e.value == value) return e.name;
  }
  return "?";
}

// Returns the value named `name` in `table`, or nullopt.
template <typename E, size_t N>
constexpr std::optional<E> ValueOf(const EnumName<E> (&table)[N],
                                   std::string_view name) {
  for (const EnumName<E>& e : table) {
    if (e.name == name) return e.value;
  }
  return std::nullopt;
}

}  // namespace migserve

#endif  // MIGSERVE_UTIL_ENUM_NAMES_H_
