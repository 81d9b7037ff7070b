#include "util/prometheus_text.h"

#include <fmt/format.h>

namespace migserve {

std::string PrometheusLabelValue(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void PrometheusText::Family(std::string_view name, std::string_view type,
                            std::string_view help) {
  text_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

void PrometheusText::Sample(std::string_view name, double value,
                            Labels labels) {
  text_ += name;
  if (labels.size() > 0) {
    text_ += '{';
    bool first = true;
    for (const auto& [label, text] : labels) {
      if (!first) text_ += ',';
      first = false;
      text_ += fmt::format("{}=\"{}\"", label, PrometheusLabelValue(text));
    }
    text_ += '}';
  }
  text_ += fmt::format(" {}\n", value);
}

}  // namespace migserve
