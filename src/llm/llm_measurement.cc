#include "llm/llm_measurement.h"

#include <fmt/format.h>

#include <utility>

#include "boundary/csv_file.h"
#include "boundary/input_file.h"

namespace migserve::llm {
namespace {

// The share of a length's spread: a cv of 10 is a mean of 1,000 tokens
// with most requests of 0.
constexpr NumberRange kCvRange{0, 10};
constexpr NumberRange kTokensRange{1, 1e7};

}  // namespace

StatusOr<std::vector<LlmMeasurement>> ParseLlmMeasurements(
    std::string_view text, const std::string& source) {
  MIGSERVE_ASSIGN_OR_RETURN(
      CsvFile csv, CsvFile::Parse(text, source, "LLM measurement files"));
  MIGSERVE_ASSIGN_OR_RETURN(int model, csv.Require("model"));
  MIGSERVE_ASSIGN_OR_RETURN(int gpu, csv.Require("gpu"));
  MIGSERVE_ASSIGN_OR_RETURN(int profile, csv.Require("profile"));
  struct NumberColumn {
    const char* name;
    double LlmMeasurement::*field;
    NumberRange range;
    bool required;
  };
  const NumberColumn numbers[] = {
      {"request_rate", &LlmMeasurement::request_rate, kRateRange, true},
      {"prompt_tokens", &LlmMeasurement::prompt_tokens, kTokensRange, true},
      {"output_tokens", &LlmMeasurement::output_tokens, kTokensRange, true},
      {"prompt_cv", &LlmMeasurement::prompt_cv, kCvRange, false},
      {"output_cv", &LlmMeasurement::output_cv, kCvRange, false},
      {"ttft_p50_ms", &LlmMeasurement::ttft_p50_ms, kLatencyMsRange, true},
      {"tpot_p50_ms", &LlmMeasurement::tpot_p50_ms, kLatencyMsRange, true},
      {"output_tokens_per_s", &LlmMeasurement::output_tokens_per_s,
       kNonNegativeRange, true}};
  std::vector<int> columns;
  for (const NumberColumn& c : numbers) {
    if (c.required) {
      MIGSERVE_ASSIGN_OR_RETURN(int at, csv.Require(c.name));
      columns.push_back(at);
    } else {
      columns.push_back(csv.Find(c.name));
    }
  }
  const int source_column = csv.Find("source");
  if (csv.Rows().size() > kMaxLlmMeasurementRows) {
    return Status::InvalidArgument(fmt::format(
        "{}: {} runs; a measurement file holds at most {} (a few lengths and "
        "rates per model and slice calibrate it)",
        source, csv.Rows().size(), kMaxLlmMeasurementRows));
  }
  std::vector<LlmMeasurement> rows;
  for (const CsvRecord& record : csv.Rows()) {
    LlmMeasurement m;
    m.line = record.line;
    MIGSERVE_ASSIGN_OR_RETURN(m.model, csv.PlainName(record, model));
    MIGSERVE_ASSIGN_OR_RETURN(m.gpu, csv.PlainName(record, gpu));
    MIGSERVE_ASSIGN_OR_RETURN(m.profile, csv.PlainName(record, profile));
    for (size_t k = 0; k < std::size(numbers); ++k) {
      if (columns[k] < 0 || csv.Field(record, columns[k]).empty()) {
        if (!numbers[k].required) continue;
      }
      MIGSERVE_ASSIGN_OR_RETURN(
          m.*numbers[k].field,
          csv.Number(record, columns[k], numbers[k].range));
    }
    m.source = csv.Field(record, source_column);
    rows.push_back(std::move(m));
  }
  return rows;
}

StatusOr<std::vector<LlmMeasurement>> LoadLlmMeasurements(
    const std::string& path) {
  MIGSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseLlmMeasurements(text, path);
}

std::string FormatLlmMeasurements(const std::vector<LlmMeasurement>& rows) {
  std::string out =
      "model,gpu,profile,request_rate,prompt_tokens,output_tokens,prompt_cv,"
      "output_cv,ttft_p50_ms,tpot_p50_ms,output_tokens_per_s,source\n";
  for (const LlmMeasurement& m : rows) {
    out += fmt::format(
        "{},{},{},{:.6g},{:.6g},{:.6g},{:.4g},{:.4g},{:.6g},"
        "{:.6g},{:.6g},{}\n",
        CsvField(m.model), CsvField(m.gpu), CsvField(m.profile), m.request_rate,
        m.prompt_tokens, m.output_tokens, m.prompt_cv, m.output_cv,
        m.ttft_p50_ms, m.tpot_p50_ms, m.output_tokens_per_s,
        CsvField(m.source));
  }
  return out;
}

}  // namespace migserve::llm
