// The number of fields of an aggregate, counted at compile time: a struct
// written out field by field somewhere (a cache key, a digest) asserts the
// count it wrote, so that a field added later fails the build there
// instead of being left out in silence.
#ifndef MIGSERVE_UTIL_FIELD_COUNT_H_
#define MIGSERVE_UTIL_FIELD_COUNT_H_

namespace migserve {
namespace field_count_internal {

// Converts to any field's type.
struct AnyField {
  template <class T>
  operator T() const;  // NOLINT(google-explicit-constructor): by design
};

template <class T, class... Fields>
constexpr int Count() {
  if constexpr (requires { T{Fields{}..., AnyField{}}; }) {
    return Count<T, Fields..., AnyField>();
  } else {
    return static_cast<int>(sizeof...(Fields));
  }
}

}  // namespace field_count_internal

// The fields of aggregate `T`: the most initializers T{...} takes.
template <class T>
constexpr int FieldCount() {
  return field_count_internal::Count<T>();
}

}  // namespace migserve

#endif  // MIGSERVE_UTIL_FIELD_COUNT_H_
