#include "kube/yaml_json.h"

#include <cstdlib>
#include <regex>
#include <string>

namespace migserve::kube {

nlohmann::ordered_json YamlToJson(const YAML::Node& node) {
  using Json = nlohmann::ordered_json;
  if (node.IsMap()) {
    Json out = Json::object();
    for (const auto& entry : node) {
      out[entry.first.as<std::string>("")] = YamlToJson(entry.second);
    }
    return out;
  }
  if (node.IsSequence()) {
    Json out = Json::array();
    for (const YAML::Node& item : node) out.push_back(YamlToJson(item));
    return out;
  }
  if (!node.IsScalar()) return nullptr;
  const std::string& text = node.Scalar();
  if (node.Tag() == "!") return text;
  static const std::regex integer("[-+]?[0-9]+");
  static const std::regex number(
      "[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  if (text == "true" || text == "True") return true;
  if (text == "false" || text == "False") return false;
  if (text == "null" || text == "~") return nullptr;
  if (std::regex_match(text, integer)) {
    return std::strtoll(text.c_str(), nullptr, 10);
  }
  if (std::regex_match(text, number)) return std::strtod(text.c_str(), nullptr);
  return text;
}

}  // namespace migserve::kube
