#include "llm/bench_import.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>

#include "boundary/input_file.h"
#include "boundary/json_fields.h"
#include "boundary/number.h"
#include "boundary/plain_name.h"
#include "llm/llm_model.h"
#include "mig/gpu_catalog.h"

namespace migserve::llm {
namespace {

// The share of failed requests above which a run is refused, not warned of.
constexpr double kMostFailedShare = 0.01;

using nlohmann::json;

Status FieldError(const std::string& path, std::string_view field,
                  std::string_view why) {
  return Status::InvalidArgument(fmt::format("{}: {}: {}", path, field, why));
}

// `root`[`key`] as a number within `range`; errors name it `field` (`key`
// where empty).
StatusOr<double> NumberAt(const json& root, const std::string& key,
                          const std::string& path,
                          const NumberRange& range = kNonNegativeRange,
                          const std::string& field = "") {
  const std::string& name = field.empty() ? key : field;
  auto it = root.find(key);
  if (it == root.end() || !it->is_number()) {
    return FieldError(path, name,
                      it == root.end() ? "missing" : "must be a number");
  }
  double value = it->get<double>();
  if (std::string why = OutOfRange(value, range); !why.empty()) {
    return FieldError(path, name, why);
  }
  return value;
}

// A string the file may carry (vLLM's --metadata KEY=VALUE); "" if not.
std::string StringAt(const json& root, const std::string& key) {
  auto it = root.find(key);
  return it != root.end() && it->is_string() ? it->get<std::string>() : "";
}

// A model id as the model table names models: after the last '/', in lower
// case ("meta-llama/Llama-3.1-8B" is llama-3.1-8b).
std::string TableName(std::string id) {
  if (size_t slash = id.rfind('/'); slash != std::string::npos) {
    id = id.substr(slash + 1);
  }
  for (char& c : id) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return id;
}

// The shipped table's entry a checkpoint named `name` (TableName's: a
// Hugging Face id without its organisation, lower case) runs: the one whose
// aliases list it, else its own, else the one its name gives without
// "meta-" and the "-instruct" or "-chat" of a tuned variant (the same
// shape: Meta-Llama-3.1-8B-Instruct is llama-3.1-8b). InvalidArgument
// naming the known models where none is.
StatusOr<std::string> ShippedName(const std::string& name,
                                  const std::string& path) {
  const LlmModelTable& table = ShippedLlmModels();
  if (const LlmModel* aliased = table.FindAlias(name)) return aliased->name;
  std::string base = name;
  if (base.starts_with("meta-")) base.erase(0, 5);
  for (const char* tuned : {"-instruct", "-chat"}) {
    if (size_t at = base.find(tuned); at != std::string::npos) {
      base.erase(at, std::string_view(tuned).size());
    }
  }
  for (const std::string& candidate : {name, base}) {
    if (table.Find(candidate).ok()) return candidate;
  }
  return FieldError(
      path, "model",
      fmt::format("{}: give --model with the table's name (a workload's own "
                  "llm_models table may name it)",
                  table.Find(name).status().message()));
}

// The standard deviation over the mean of the numbers in `root`[`key`]
// (vLLM's --save-detailed lengths); 0 if there are none.
double CvOf(const json& root, const std::string& key) {
  auto it = root.find(key);
  if (it == root.end() || !it->is_array() || it->size() < 2) return 0;
  std::vector<double> x;
  for (const json& v : *it) {
    if (v.is_number()) x.push_back(v.get<double>());
  }
  if (x.size() < 2) return 0;
  double n = static_cast<double>(x.size());
  double mean = std::accumulate(x.begin(), x.end(), 0.0) / n;
  double sq = 0;
  for (double v : x) sq += (v - mean) * (v - mean);
  return mean > 0 ? std::sqrt(sq / n) / mean : 0;
}

Status ReadVllm(const json& root, const std::string& path, LlmMeasurement* m,
                std::vector<std::string>* warnings) {
  MIGSERVE_ASSIGN_OR_RETURN(double completed,
                            NumberAt(root, "completed", path));
  if (completed < 1)
    return FieldError(path, "completed", "no request completed");
  auto rate = root.find("request_rate");
  auto concurrency = root.find("max_concurrency");
  bool burst = rate != root.end() && rate->is_string() &&
               (concurrency == root.end() || concurrency->is_null());
  if (burst) {
    return FieldError(path, "request_rate",
                      "inf without max_concurrency: every request was sent "
                      "at once, so TTFT is the queue of the whole run; "
                      "measure at a --request-rate");
  }
  if (auto failed = root.find("failed"); failed != root.end() &&
                                         failed->is_number() &&
                                         failed->get<double>() > 0) {
    double count = failed->get<double>();
    // A run whose requests mostly failed measured errors, not the model:
    // its figures are those of the few that got through.
    if (count > kMostFailedShare * (count + completed)) {
      return FieldError(
          path, "failed",
          fmt::format("{:g} of {:g} requests failed: the run measured "
                      "errors; measure again once they pass",
                      count, count + completed));
    }
    warnings->push_back(fmt::format("{}: {} requests failed", path, count));
  }
  MIGSERVE_ASSIGN_OR_RETURN(
      m->request_rate, NumberAt(root, "request_throughput", path, kRateRange));
  MIGSERVE_ASSIGN_OR_RETURN(double input,
                            NumberAt(root, "total_input_tokens", path));
  MIGSERVE_ASSIGN_OR_RETURN(double output,
                            NumberAt(root, "total_output_tokens", path));
  m->prompt_tokens = input / completed;
  m->output_tokens = output / completed;
  m->prompt_cv = CvOf(root, "input_lens");
  m->output_cv = CvOf(root, "output_lens");
  MIGSERVE_ASSIGN_OR_RETURN(
      m->ttft_p50_ms, NumberAt(root, "median_ttft_ms", path, kLatencyMsRange));
  MIGSERVE_ASSIGN_OR_RETURN(
      m->tpot_p50_ms, NumberAt(root, "median_tpot_ms", path, kLatencyMsRange));
  MIGSERVE_ASSIGN_OR_RETURN(m->output_tokens_per_s,
                            NumberAt(root, "output_throughput", path));
  if (m->model.empty()) m->model = TableName(StringAt(root, "model_id"));
  if (m->gpu.empty()) m->gpu = StringAt(root, "gpu");
  if (m->profile.empty()) m->profile = StringAt(root, "profile");
  return Status::Ok();
}

// What AIPerf's metric `name` is: a time, read in milliseconds; a rate,
// read per second; or a count (tokens), read as it is.
enum class Unit { kMs, kPerS, kCount };

// AIPerf's metric `name`'s statistic `stat` in milliseconds, per second or
// as it is (`unit`).
StatusOr<double> Metric(const json& root, const std::string& name,
                        const std::string& stat, const std::string& path,
                        Unit unit_read, const NumberRange& range) {
  auto it = root.find(name);
  if (it == root.end() || !it->is_object()) {
    return FieldError(path, name, "missing");
  }
  const std::string field = name + "." + stat;
  MIGSERVE_ASSIGN_OR_RETURN(
      double value, NumberAt(*it, stat, path, kNonNegativeRange, field));
  const std::string unit = StringAt(*it, "unit");
  if (unit_read == Unit::kPerS && !unit.empty()) {
    // "requests/sec", "tokens/min"; none: per second.
    size_t slash = unit.find('/');
    std::string per = slash == std::string::npos ? "" : unit.substr(slash + 1);
    if (per == "min" || per == "minute") {
      value /= 60;
    } else if (per != "sec" && per != "s" && per != "second") {
      return FieldError(path, name + ".unit",
                        fmt::format("'{}' is not a rate unit read (per sec "
                                    "or per min)",
                                    unit));
    }
  }
  if (unit_read == Unit::kMs) {
    if (unit == "ns") {
      value /= 1e6;
    } else if (unit == "us") {
      value /= 1e3;
    } else if (unit == "s" || unit == "sec") {
      value *= 1e3;
    } else if (unit != "ms") {
      return FieldError(path, name + ".unit",
                        fmt::format("'{}' is not a time unit read (ms, us, "
                                    "ns, s)",
                                    unit));
    }
  }
  if (std::string why = OutOfRange(value, range); !why.empty()) {
    return FieldError(path, field, why);
  }
  return value;
}

// The model AIPerf's run names ("" if none); InvalidArgument, naming
// `path`, where it names several.
StatusOr<std::string> AiperfModel(const json& root, const std::string& path) {
  auto config = root.find("input_config");
  if (config == root.end() || !config->is_object()) return std::string();
  std::vector<const json*> places{&*config};
  if (auto e = config->find("endpoint"); e != config->end() && e->is_object()) {
    places.insert(places.begin(), &*e);  // AIPerf's; genai-perf's at the top
  }
  for (const json* at : places) {
    for (const char* key : {"model_names", "model"}) {
      auto names = at->find(key);
      if (names != at->end() && names->is_array() && !names->empty() &&
          names->front().is_string()) {
        // A run of several models mixes their figures: not one row.
        if (names->size() > 1) {
          return Status::InvalidArgument(fmt::format(
              "{}: input_config {}: {} models ({}): their figures are of all "
              "of them together; measure one model a run",
              path, key, names->size(), names->dump()));
        }
        return TableName(names->front().get<std::string>());
      }
    }
  }
  return std::string();
}

Status ReadAiperf(const json& root, const std::string& path,
                  LlmMeasurement* m) {
  MIGSERVE_ASSIGN_OR_RETURN(
      m->request_rate,
      Metric(root, "request_throughput", "avg", path, Unit::kPerS, kRateRange));
  MIGSERVE_ASSIGN_OR_RETURN(m->ttft_p50_ms,
                            Metric(root, "time_to_first_token", "p50", path,
                                   Unit::kMs, kLatencyMsRange));
  MIGSERVE_ASSIGN_OR_RETURN(m->tpot_p50_ms,
                            Metric(root, "inter_token_latency", "p50", path,
                                   Unit::kMs, kLatencyMsRange));
  struct Length {
    const char* name;
    double* mean;
    double* cv;
  };
  for (const Length& l :
       {Length{"input_sequence_length", &m->prompt_tokens, &m->prompt_cv},
        Length{"output_sequence_length", &m->output_tokens, &m->output_cv}}) {
    MIGSERVE_ASSIGN_OR_RETURN(
        *l.mean, Metric(root, l.name, "avg", path, Unit::kCount, kRateRange));
    const json& stats = root.at(l.name);
    if (auto sd = stats.find("std"); sd != stats.end() && sd->is_number()) {
      *l.cv = sd->get<double>() / *l.mean;
    }
  }
  MIGSERVE_ASSIGN_OR_RETURN(m->output_tokens_per_s,
                            Metric(root, "output_token_throughput", "avg", path,
                                   Unit::kPerS, kNonNegativeRange));
  MIGSERVE_ASSIGN_OR_RETURN(std::string model, AiperfModel(root, path));
  if (m->model.empty()) m->model = model;
  return Status::Ok();
}

}  // namespace

StatusOr<LlmMeasurement> ImportBenchResult(BenchFormat format,
                                           std::string_view text,
                                           const std::string& path,
                                           const BenchImportOptions& options,
                                           std::vector<std::string>* warnings) {
  // Through the boundary's reader, as every outside JSON (issue 92: a key
  // given twice was read as its last, and NaN or a 400-digit integer said
  // only "not a JSON object").
  MIGSERVE_ASSIGN_OR_RETURN(json root,
                            ParseJsonObject(std::string(text), path));
  LlmMeasurement m;
  m.model = options.model;
  m.gpu = options.gpu;
  m.profile = options.profile;
  m.source = path;
  MIGSERVE_RETURN_IF_ERROR(format == BenchFormat::kVllm
                               ? ReadVllm(root, path, &m, warnings)
                               : ReadAiperf(root, path, &m));
  if (options.model.empty() && !m.model.empty()) {
    MIGSERVE_ASSIGN_OR_RETURN(m.model, ShippedName(m.model, path));
  }
  for (auto [flag, value] :
       {std::pair{"--model", &m.model}, std::pair{"--gpu", &m.gpu},
        std::pair{"--profile", &m.profile}}) {
    if (value->empty()) {
      return FieldError(path, flag + 2,
                        fmt::format("not in the file: give {}{}", flag,
                                    format == BenchFormat::kVllm
                                        ? " (or run vllm bench serve with "
                                          "--metadata gpu=G profile=P)"
                                        : ""));
    }
    if (std::string why = PlainNameProblem(*value); !why.empty()) {
      return FieldError(path, flag + 2, why);
    }
  }
  if (m.output_tokens < 2) {
    return FieldError(path, "output tokens",
                      "fewer than 2 a request: no time per output token");
  }
  // A run on a GPU or profile no table knows would be a row no workload
  // ever reads.
  StatusOr<const mig::GpuModel*> gpu = mig::GpuCatalog::Default().Find(m.gpu);
  if (!gpu.ok()) return FieldError(path, "gpu", gpu.status().message());
  StatusOr<std::string> profile = (*gpu)->CanonicalProfile(m.profile);
  if (!profile.ok())
    return FieldError(path, "profile", profile.status().message());
  m.profile = *profile;
  return m;
}

StatusOr<ImportedRuns> ImportBenchResults(BenchFormat format,
                                          const std::vector<std::string>& paths,
                                          const BenchImportOptions& options) {
  ImportedRuns out;
  for (const std::string& path : paths) {
    MIGSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
    MIGSERVE_ASSIGN_OR_RETURN(
        LlmMeasurement m,
        ImportBenchResult(format, text, path, options, &out.warnings));
    out.rows.push_back(std::move(m));
  }
  return out;
}

}  // namespace migserve::llm
