#include "autoscale/trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "boundary/csv_file.h"
#include "boundary/input_file.h"
#include "boundary/quantity.h"

namespace migserve::autoscale {

int RateTrace::Find(std::string_view service) const {
  auto it = std::find(services.begin(), services.end(), service);
  return it == services.end() ? -1 : static_cast<int>(it - services.begin());
}

size_t RateTrace::StepAt(double time_s) const {
  auto it = std::upper_bound(times_s.begin(), times_s.end(), time_s);
  return it == times_s.begin() ? 0 : (it - times_s.begin()) - 1;
}

StatusOr<RateTrace> ParseRateTrace(std::string_view text,
                                   const std::string& source) {
  MIGSERVE_ASSIGN_OR_RETURN(CsvFile csv,
                            CsvFile::Parse(text, source, "rate traces"));
  MIGSERVE_ASSIGN_OR_RETURN(int time_col, csv.Require("time_s"));
  MIGSERVE_ASSIGN_OR_RETURN(int service_col, csv.Require("service"));
  MIGSERVE_ASSIGN_OR_RETURN(int rate_col, csv.Require("rate"));
  RateTrace trace;
  trace.source = source;
  // Each moment's rows: service index -> rate.
  std::vector<std::map<int, double>> rows_at;
  for (const CsvRecord& row : csv.Rows()) {
    MIGSERVE_ASSIGN_OR_RETURN(double time, csv.Number(row, time_col));
    MIGSERVE_ASSIGN_OR_RETURN(std::string service,
                              csv.PlainName(row, service_col));
    MIGSERVE_ASSIGN_OR_RETURN(double rate,
                              csv.Number(row, rate_col, Rate::kRange));
    if (!trace.times_s.empty() && time < trace.times_s.back()) {
      return csv.Error(row, time_col,
                       fmt::format("{} is before the row above ({}): rows go "
                                   "in time order",
                                   time, trace.times_s.back()));
    }
    if (trace.times_s.empty() || time > trace.times_s.back()) {
      trace.times_s.push_back(time);
      rows_at.emplace_back();
    }
    int s = trace.Find(service);
    if (s < 0) {
      s = static_cast<int>(trace.services.size());
      trace.services.push_back(service);
      trace.lines.push_back(row.line);
    }
    if (!rows_at.back().emplace(s, rate).second) {
      return csv.Error(
          row, service_col,
          fmt::format("{} has a second rate at {} s", service, time));
    }
  }
  if (trace.times_s.size() < 2) {
    return Status::InvalidArgument(fmt::format(
        "{}: a trace needs rows at two moments at least (its start and "
        "end)",
        source));
  }
  for (size_t s = 0; s < trace.services.size(); ++s) {
    if (rows_at.front().count(static_cast<int>(s)) == 0) {
      return Status::InvalidArgument(
          fmt::format("{}: service {} has no rate at the first moment {} s",
                      source, trace.services[s], trace.times_s.front()));
    }
  }
  std::vector<double> now(trace.services.size(), 0);
  for (const std::map<int, double>& rows : rows_at) {
    for (const auto& [s, rate] : rows) now[s] = rate;
    trace.rates.push_back(now);
  }
  return trace;
}

StatusOr<RateTrace> LoadRateTrace(const std::string& path) {
  MIGSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseRateTrace(text, path);
}

}  // namespace migserve::autoscale
