#include "autoscale/prometheus_client.h"

#include <fmt/format.h>
#include <httplib.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "boundary/json_fields.h"
#include "util/interrupt.h"

namespace migserve::autoscale {
namespace {

// A sample's value: Prometheus writes numbers as strings, "NaN" and
// "+Inf" / "-Inf" included. Anything else is InvalidArgument: that series'
// fault (an exporter's, a recording rule's), not the server's, so that the
// observer skips the one service it belongs to and names it.
StatusOr<double> Value(const nlohmann::json& v) {
  if (!v.is_string()) {
    return Status::InvalidArgument(
        fmt::format("value {} is not a string", v.dump()));
  }
  const std::string& text = v.get_ref<const std::string&>();
  if (text == "NaN") return std::nan("");
  if (text == "+Inf") return HUGE_VAL;
  if (text == "-Inf") return -HUGE_VAL;
  // strtod, not stod: a value too small for a normal double (1e-320) is a
  // number all the same (stod throws on it), and one too large comes back
  // as inf, which the observer refuses as a rate. Decimal only: strtod
  // would also read "0x10" as 16 and "inf" or "nan(1)" as numbers.
  if (text.find_first_not_of("0123456789+-.eE") != std::string::npos) {
    return Status::InvalidArgument(
        fmt::format("value {} is not a decimal number", v.dump()));
  }
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (!text.empty() && end == text.c_str() + text.size()) return value;
  return Status::InvalidArgument(
      fmt::format("value {} is not a number", v.dump()));
}

StatusOr<std::vector<PromSeries>> Matrix(const nlohmann::json& data) {
  // Not value(): it throws on a field of another type.
  if (!data.is_object() || !data.contains("resultType") ||
      data["resultType"] != "matrix" || !data.contains("result") ||
      !data["result"].is_array()) {
    return Status::Unavailable("the answer is not a matrix");
  }
  std::vector<PromSeries> out;
  for (const nlohmann::json& r : data["result"]) {
    PromSeries series;
    if (r.contains("metric") && r["metric"].is_object()) {
      for (const auto& [k, v] : r["metric"].items()) {
        if (v.is_string()) series.labels[k] = v.get<std::string>();
      }
    }
    if (!r.contains("values") || !r["values"].is_array()) {
      return Status::Unavailable("a series has no values");
    }
    for (const nlohmann::json& pair : r["values"]) {
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number()) {
        return Status::Unavailable("a sample is not [time, \"value\"]");
      }
      MIGSERVE_ASSIGN_OR_RETURN(double value, Value(pair[1]));
      series.samples.push_back({pair[0].get<double>(), value});
    }
    out.push_back(std::move(series));
  }
  return out;
}

}  // namespace

StatusOr<PrometheusClient> PrometheusClient::Make(const std::string& url,
                                                  PrometheusLimits limits) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0 || url.size() == scheme.size()) {
    return Status::InvalidArgument(fmt::format(
        "--prometheus: '{}' is not http://host:port[/prefix]", url));
  }
  size_t slash = url.find('/', scheme.size());
  std::string origin = url.substr(0, slash);
  std::string prefix = slash == std::string::npos ? "" : url.substr(slash);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  return PrometheusClient(url, origin, prefix, limits);
}

StatusOr<std::vector<PromSeries>> PrometheusClient::QueryRange(
    const std::string& query, double start_s, double end_s,
    double step_s) const {
  httplib::Client client(origin_);
  client.set_connection_timeout(limits_.connect_timeout_s);
  client.set_read_timeout(limits_.read_timeout_s);
  httplib::Params params{{"query", query},
                         {"start", fmt::format("{:.3f}", start_s)},
                         {"end", fmt::format("{:.3f}", end_s)},
                         {"step", fmt::format("{:g}", step_s)}};
  auto where = [&] { return fmt::format("{} (query {})", url_, query); };
  std::string body;
  std::string cut;  // why the answer was cut off, if it was
  auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(limits_.answer_deadline_s));
  httplib::Result res =
      client.Get(prefix_ + "/api/v1/query_range", params, httplib::Headers{},
                 [&](const char* data, size_t length) {
                   if (Interrupted()) {
                     cut = "interrupted";
                   } else if (body.size() + length > limits_.max_answer_bytes) {
                     cut = fmt::format("the answer passed {} bytes",
                                       limits_.max_answer_bytes);
                   } else if (std::chrono::steady_clock::now() > deadline) {
                     cut = fmt::format("the answer took more than {:g} s",
                                       limits_.answer_deadline_s);
                   } else {
                     body.append(data, length);
                     return true;
                   }
                   return false;
                 });
  if (!cut.empty()) {
    return Status::Unavailable(
        fmt::format("Prometheus at {}: {}", where(), cut));
  }
  if (!res) {
    return Status::Unavailable(fmt::format("Prometheus at {}: {}", where(),
                                           httplib::to_string(res.error())));
  }
  StatusOr<std::vector<PromSeries>> series = ParseQueryRange(body, res->status);
  if (!series.ok()) {
    return series.status().WithPrefix(fmt::format("Prometheus at {}", where()));
  }
  return series;
}

StatusOr<std::vector<PromSeries>> ParseQueryRange(const std::string& text,
                                                  int http_status) {
  // The boundary's parser: an object with a key given twice is not the
  // API's JSON either.
  StatusOr<nlohmann::json> parsed = ParseJsonObject(text, "the answer");
  if (!parsed.ok()) {
    return Status::Unavailable(
        fmt::format("HTTP {}, not the API's JSON", http_status));
  }
  const nlohmann::json& body = *parsed;
  auto status = body.find("status");
  if (status == body.end() || *status != "success") {
    const nlohmann::json error = body.value("error", nlohmann::json());
    const nlohmann::json type = body.value("errorType", nlohmann::json());
    std::string message = fmt::format(
        "{} ({})",
        error.is_string() ? error.get<std::string>() : "no error given",
        type.is_string() ? type.get<std::string>() : "");
    // A query the server refuses (bad_data) is the query's fault.
    return http_status == 400 || http_status == 422
               ? Status::InvalidArgument(message)
               : Status::Unavailable(message);
  }
  auto data = body.find("data");
  if (data == body.end()) return Status::Unavailable("the answer has no data");
  return Matrix(*data);
}

}  // namespace migserve::autoscale
