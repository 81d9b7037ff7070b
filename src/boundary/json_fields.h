// The project's one way to read JSON: documents a user gives, with errors
// that name the file and the field path (`d.json: gpus[2].instances[0].start:
// missing`), and objects that come from a cluster (anyone can write them),
// read leniently: a missing field or one of another type is nullopt. No
// reader here throws; nothing outside reads JSON with throwing calls.
#ifndef MIGSERVE_BOUNDARY_JSON_FIELDS_H_
#define MIGSERVE_BOUNDARY_JSON_FIELDS_H_

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "util/status_or.h"

namespace migserve {

// Parses `text` read from `source`. Returns InvalidArgument
// "source:line:column: invalid JSON: reason" if it is malformed.
StatusOr<nlohmann::json> ParseJson(const std::string& text,
                                   const std::string& source);

// Parses `text` read from `source` as ParseJson does and returns it if it
// is an object; otherwise InvalidArgument "source: WHAT: expected an
// object", WHAT being `what` or "document".
StatusOr<nlohmann::json> ParseJsonObject(const std::string& text,
                                         const std::string& source,
                                         const std::string& what = "");

// Returns InvalidArgument "source: path: expected an object" unless `j` is
// an object.
Status ExpectObject(const nlohmann::json& j, const std::string& source,
                    const std::string& path);

// Reads typed fields of one JSON object, naming `path` in errors.
class JsonFields {
 public:
  // `object` and `source` are not copied: they outlive the reader.
  JsonFields(const nlohmann::json& object, const std::string& source,
             std::string path)
      : object_(object), source_(source), path_(std::move(path)) {}

  // Returns InvalidArgument "source: path.key: reason".
  Status Error(std::string_view key, std::string_view reason) const;
  // OK if `value`, read from field `key`, is a plain name
  // (boundary/plain_name.h); else Error naming the field and why.
  Status CheckPlainName(std::string_view key, std::string_view value) const;
  // Returns "path.key" ("key" at the top).
  std::string Path(std::string_view key) const;
  const std::string& source() const { return source_; }

  bool Has(const char* key) const {
    return object_.contains(key) && !object_[key].is_null();
  }

  // Sets `out` from the field `key`; a missing field is an error only if
  // `required`. Returns InvalidArgument on a type mismatch.
  template <typename T>
  Status Get(const char* key, bool required, T* out) const {
    if (!Has(key)) return required ? Error(key, "missing") : Status::Ok();
    const nlohmann::json& v = object_[key];
    bool ok;
    if constexpr (std::is_same_v<T, std::string>) {
      ok = v.is_string();
    } else if constexpr (std::is_same_v<T, bool>) {
      ok = v.is_boolean();
    } else if constexpr (std::is_integral_v<T>) {
      ok = v.is_number_integer();
    } else {
      ok = v.is_number();
    }
    if (!ok) {
      return Error(key, fmt::format("expected {}, got {}",
                                    std::is_same_v<T, std::string> ? "a string"
                                    : std::is_same_v<T, bool> ? "true or false"
                                    : std::is_integral_v<T>   ? "an integer"
                                                              : "a number",
                                    v.dump()));
    }
    *out = v.get<T>();
    return Status::Ok();
  }

  // Returns the list under `key`, or InvalidArgument if absent or not one.
  StatusOr<const nlohmann::json*> Array(const char* key) const;

  // Returns the object under `key`, or InvalidArgument if absent or not one.
  StatusOr<const nlohmann::json*> Object(const char* key) const;

  // Reads the string field `key` (required) as a checked value T (a
  // CheckedName): T::Parse's rule, the error naming the field.
  template <typename T>
  StatusOr<T> GetChecked(const char* key) const {
    std::string text;
    MIGSERVE_RETURN_IF_ERROR(Get(key, true, &text));
    std::string problem = T::Problem(text);
    if (!problem.empty()) return Error(key, problem);
    return T::Parse(text);
  }

  // Reads the optional list `key` of strings, each a checked value T (a
  // CheckedName), into `out`; the error names the item (`key[k]`).
  template <typename T>
  Status CheckedList(const char* key, std::vector<T>* out) const {
    if (!Has(key)) return Status::Ok();
    MIGSERVE_ASSIGN_OR_RETURN(const nlohmann::json* list, Array(key));
    for (size_t k = 0; k < list->size(); ++k) {
      std::string item = fmt::format("{}[{}]", key, k);
      const nlohmann::json& v = (*list)[k];
      if (!v.is_string()) {
        return Error(item, "expected a string, got " + v.dump());
      }
      std::string problem = T::Problem(v.get_ref<const std::string&>());
      if (!problem.empty()) return Error(item, problem);
      out->push_back(*T::Parse(v.get_ref<const std::string&>()));
    }
    return Status::Ok();
  }

  // Reads the list `key` of objects, each made by make(its JsonFields), a
  // StatusOr<T> (a T with no unchecked default value), into `out`.
  template <typename T, typename Make>
  Status ObjectsMade(const char* key, Make make, std::vector<T>* out) const {
    MIGSERVE_ASSIGN_OR_RETURN(const nlohmann::json* list, Array(key));
    for (size_t k = 0; k < list->size(); ++k) {
      std::string path = fmt::format("{}[{}]", Path(key), k);
      MIGSERVE_RETURN_IF_ERROR(ExpectObject((*list)[k], source_, path));
      MIGSERVE_ASSIGN_OR_RETURN(T item,
                                make(JsonFields((*list)[k], source_, path)));
      out->push_back(std::move(item));
    }
    return Status::Ok();
  }

  // Reads the list `key` of objects, each with read(its JsonFields, &item)
  // (its path `key[k]`), into `out`. Returns the first error.
  template <typename T, typename Read>
  Status Objects(const char* key, Read read, std::vector<T>* out) const {
    return ObjectsMade(
        key,
        [&read](const JsonFields& fields) -> StatusOr<T> {
          T item;
          MIGSERVE_RETURN_IF_ERROR(read(fields, &item));
          return item;
        },
        out);
  }

 private:
  const nlohmann::json& object_;
  const std::string& source_;
  std::string path_;
};

// Lenient readers, for objects from a cluster: each returns nullopt (or
// null) for a missing field or one of another type.

// Returns the object `object[key]`, or null.
const nlohmann::json* ObjectAt(const nlohmann::json& object, const char* key);
// Returns the array `object[key]`, or null.
const nlohmann::json* ArrayAt(const nlohmann::json& object, const char* key);
// Returns the string `object[key]`, or nullopt.
std::optional<std::string> StringAt(const nlohmann::json& object,
                                    const char* key);
// Returns the integer `object[key]`, or nullopt (also when it does not fit
// an int).
std::optional<int> IntAt(const nlohmann::json& object, const char* key);
// Returns the string `object[map][key]`, or nullopt.
std::optional<std::string> StringField(const nlohmann::json& object,
                                       const char* map, const char* key);
// Returns `object[map][key]`, a string holding a whole decimal integer, as
// that integer, or nullopt.
std::optional<int> IntField(const nlohmann::json& object, const char* map,
                            const char* key);

}  // namespace migserve

#endif  // MIGSERVE_BOUNDARY_JSON_FIELDS_H_
