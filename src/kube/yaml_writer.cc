#include "kube/yaml_writer.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace migserve::kube {
namespace {

// True if a YAML 1.1 or 1.2 reader might not read `s`, written plain, as
// this string: the words for booleans and null, and anything that starts
// like a number (YAML 1.1 reads "1:30" as 90).
bool NeedsQuotes(const std::string& s) {
  if (s.empty()) return true;
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  static constexpr std::array<const char*, 12> kWords = {
      "true", "false", "yes",  "no", "on",   "off",
      "y",    "n",     "null", "~",  ".inf", ".nan"};
  for (const char* w : kWords) {
    if (lower == w) return true;
  }
  size_t first = s.find_first_not_of("+-.");
  return first != std::string::npos && first <= 2 &&
         std::isdigit(static_cast<unsigned char>(s[first]));
}

void EmitString(const std::string& s, YAML::Emitter* out) {
  if (NeedsQuotes(s)) *out << YAML::DoubleQuoted;
  *out << s;
}

void Emit(const nlohmann::ordered_json& value, YAML::Emitter* out) {
  switch (value.type()) {
    case nlohmann::ordered_json::value_t::object:
      *out << YAML::BeginMap;
      for (const auto& [key, item] : value.items()) {
        *out << YAML::Key;
        EmitString(key, out);
        *out << YAML::Value;
        Emit(item, out);
      }
      *out << YAML::EndMap;
      return;
    case nlohmann::ordered_json::value_t::array:
      *out << YAML::BeginSeq;
      for (const auto& item : value) Emit(item, out);
      *out << YAML::EndSeq;
      return;
    case nlohmann::ordered_json::value_t::string:
      EmitString(value.get_ref<const std::string&>(), out);
      return;
    case nlohmann::ordered_json::value_t::boolean:
      *out << value.get<bool>();
      return;
    case nlohmann::ordered_json::value_t::null:
      *out << YAML::Null;
      return;
    default:
      *out << value.dump();
      return;
  }
}

}  // namespace

std::string ToYaml(const std::vector<nlohmann::ordered_json>& documents) {
  std::string text;
  for (size_t i = 0; i < documents.size(); ++i) {
    YAML::Emitter out;
    out.SetIndent(2);
    out.SetSeqFormat(YAML::Block);
    out.SetMapFormat(YAML::Block);
    out << YAML::TrueFalseBool << YAML::LowerCase;
    Emit(documents[i], &out);
    if (i > 0) text += "---\n";
    text += out.c_str();
    text += "\n";
  }
  return text;
}

}  // namespace migserve::kube
