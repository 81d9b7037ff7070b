// The Prometheus text exposition format (version 0.0.4), written in one
// place for every /metrics endpoint (the controller's, the autoscaler's):
// each family's HELP and TYPE lines, then its samples, label values escaped
// (backslash, double quote and line feed) so that no name can end a value or
// a line. Debian packages no C++ Prometheus client; this is the part of one
// migserve needs.
#ifndef MIGSERVE_UTIL_PROMETHEUS_TEXT_H_
#define MIGSERVE_UTIL_PROMETHEUS_TEXT_H_

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace migserve {

class PrometheusText {
 public:
  using Labels =
      std::initializer_list<std::pair<std::string_view, std::string_view>>;

  // Starts family `name` of `type` ("counter" or "gauge") described by
  // `help` (one line).
  void Family(std::string_view name, std::string_view type,
              std::string_view help);
  // Adds the sample `name{labels} value` (labels in the order given).
  void Sample(std::string_view name, double value, Labels labels = {});

  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// `value` escaped for a label value: backslash, double quote and line feed.
std::string PrometheusLabelValue(std::string_view value);

}  // namespace migserve

#endif  // MIGSERVE_UTIL_PROMETHEUS_TEXT_H_
