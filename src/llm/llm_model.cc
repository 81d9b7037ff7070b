#include "llm/llm_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string_view>
#include <tuple>

#include "boundary/input_file.h"
#include "boundary/plain_name.h"
#include "boundary/yaml_map.h"
#include "llm/embedded_llm_models.h"

namespace migserve::llm {
namespace {

// The largest value an integer field of an entry may take.
int MostOf(std::string_view key) {
  return key == "max_context" ? 100'000'000 : 100000;
}

bool IsDtype(const std::string& dtype) {
  return dtype == "bf16" || dtype == "fp16" || dtype == "fp8";
}

// A mixture's fields agree: experts and experts_per_token both 0 (dense)
// or 1 <= experts_per_token < experts with active parameters below the
// total; attention heads a multiple of the key/value heads.
Status CheckShape(const LlmModel& m, const YamlMap& map) {
  if ((m.experts == 0) != (m.experts_per_token == 0) ||
      m.experts_per_token > m.experts) {
    return map.Error("experts_per_token",
                     fmt::format("must be from 1 to experts ({}) for a "
                                 "mixture of experts, absent for a dense "
                                 "model, got {}",
                                 m.experts, m.experts_per_token));
  }
  if (m.active_parameters_b > m.parameters_b) {
    return map.Error("active_parameters_b",
                     fmt::format("{:g} is more than parameters_b ({:g})",
                                 m.active_parameters_b, m.parameters_b));
  }
  // The experts alone give each token experts_per_token / experts of the
  // routed parameters; active parameters below that (1% aside) would leave
  // the shared weights negative: numbers the expert split does not
  // explain (issue 93: such a table multiplied credits 4-fold).
  if (m.experts > 0 && m.active_parameters_b > 0 &&
      m.active_parameters_b * m.experts <
          0.99 * m.experts_per_token * m.parameters_b) {
    return map.Error(
        "active_parameters_b",
        fmt::format("{:g} is less than the experts alone give a token, "
                    "experts_per_token / experts x parameters_b = {} / {} x "
                    "{:g} = {:.3g}: the shared weights would be negative",
                    m.active_parameters_b, m.experts_per_token, m.experts,
                    m.parameters_b,
                    m.experts_per_token * m.parameters_b / m.experts));
  }
  if (!m.expert_dtype.empty() && m.experts == 0) {
    return map.Error("expert_dtype", "only a mixture of experts has it");
  }
  if (m.experts > 0 && m.experts_per_token < m.experts &&
      !(m.active_parameters_b > 0 && m.active_parameters_b < m.parameters_b)) {
    return map.Error("active_parameters_b",
                     "a mixture of experts needs its active parameters, "
                     "fewer than parameters_b");
  }
  if (m.attention_heads > 0 && m.attention_heads % m.kv_heads != 0) {
    return map.Error("attention_heads",
                     fmt::format("must be a multiple of kv_heads ({}), got {}",
                                 m.kv_heads, m.attention_heads));
  }
  return Status::Ok();
}

StatusOr<LlmModel> ParseModel(const YAML::Node& node, const std::string& source,
                              const std::string& path) {
  MIGSERVE_ASSIGN_OR_RETURN(YamlMap map, YamlMap::Open(node, source, path));
  MIGSERVE_RETURN_IF_ERROR(map.CheckKeys(
      {"name", "aliases", "parameters_b", "active_parameters_b", "experts",
       "experts_per_token", "layers", "attention_heads", "kv_heads", "head_dim",
       "dtype", "expert_dtype", "kv_dtype", "max_context"}));
  LlmModel m;
  m.line = map.line();
  MIGSERVE_RETURN_IF_ERROR(map.Required("name", &m.name));
  if (std::string problem = PlainNameProblem(m.name); !problem.empty()) {
    return map.Error("name", problem);
  }
  MIGSERVE_RETURN_IF_ERROR(map.Optional("aliases", &m.aliases));
  // The proxy routes by each alias and the model's replicas answer to it
  // (llm::ServedNames): each is a name vLLM can be told to serve.
  for (const std::string& alias : m.aliases) {
    if (std::string problem = ServedNameProblem(alias); !problem.empty()) {
      return map.Error("aliases", problem);
    }
  }
  MIGSERVE_RETURN_IF_ERROR(
      map.Required("parameters_b", &m.parameters_b, {0.001, 10000}));
  MIGSERVE_RETURN_IF_ERROR(map.Optional(
      "active_parameters_b", &m.active_parameters_b, {0.001, 10000}));
  for (auto [key, out, required] :
       {std::tuple{"layers", &m.layers, true},
        std::tuple{"kv_heads", &m.kv_heads, true},
        std::tuple{"head_dim", &m.head_dim, true},
        std::tuple{"attention_heads", &m.attention_heads, false},
        std::tuple{"experts", &m.experts, false},
        std::tuple{"experts_per_token", &m.experts_per_token, false},
        std::tuple{"max_context", &m.max_context, false}}) {
    MIGSERVE_RETURN_IF_ERROR(required ? map.Required(key, out)
                                      : map.Optional(key, out));
    if ((required || map.Has(key)) && (*out < 1 || *out > MostOf(key))) {
      return map.Error(
          key, fmt::format("must be from 1 to {}, got {}", MostOf(key), *out));
    }
  }
  MIGSERVE_RETURN_IF_ERROR(map.Optional("dtype", &m.dtype));
  if (!IsDtype(m.dtype) && m.dtype != "mxfp4") {
    return map.Error("dtype",
                     "must be bf16, fp16, fp8 or mxfp4, got " + m.dtype);
  }
  MIGSERVE_RETURN_IF_ERROR(map.Optional("expert_dtype", &m.expert_dtype));
  if (map.Has("expert_dtype") && !IsDtype(m.expert_dtype) &&
      m.expert_dtype != "mxfp4") {
    return map.Error("expert_dtype",
                     "must be bf16, fp16, fp8 or mxfp4, got " + m.expert_dtype);
  }
  MIGSERVE_RETURN_IF_ERROR(map.Optional("kv_dtype", &m.kv_dtype));
  if (map.Has("kv_dtype") && !IsDtype(m.kv_dtype)) {
    return map.Error("kv_dtype",
                     "must be bf16, fp16 or fp8, got " + m.kv_dtype);
  }
  MIGSERVE_RETURN_IF_ERROR(CheckShape(m, map));
  return m;
}

}  // namespace

double ExpertsTouched(int experts, int per_token, double tokens) {
  const double e = experts, k = per_token;
  return e * (1 - std::pow(1 - k / e, tokens));
}

double LlmModel::ExpertParametersB() const {
  if (experts_per_token == 0 || experts_per_token >= experts) return 0;
  return (parameters_b - ActiveParametersB()) / (experts - experts_per_token);
}

double LlmModel::ExpertBytes() const {
  return ExpertParametersB() * 1e9 * ExpertBytesPerValue();
}

double LlmModel::WeightBytes() const {
  const double routed = experts * ExpertParametersB();
  return ((parameters_b - routed) * BytesPerValue() +
          routed * ExpertBytesPerValue()) *
         1e9;
}

double LlmModel::WeightBytesRead(double tokens) const {
  const double expert = ExpertBytes();
  if (expert == 0 || tokens <= 0) return WeightBytes();
  return WeightBytes() -
         (experts - ExpertsTouched(experts, experts_per_token, tokens)) *
             expert;
}

StatusOr<const LlmModel*> LlmModelTable::Find(const std::string& name) const {
  // A name from outside is said on one line, its control characters
  // escaped: no model id can add a line to a message.
  if (!IsPlainName(name)) {
    return Status::NotFound(
        fmt::format("{:?} is not an LLM model's name (letters, digits, '-', "
                    "'_' or '.')",
                    name));
  }
  std::vector<std::string> names;
  for (const LlmModel& m : models_) {
    if (m.name == name) return &m;
    names.push_back(m.name);
  }
  return Status::NotFound(fmt::format("unknown LLM model '{}' (known: {})",
                                      name, fmt::join(names, ", ")));
}

namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// `id` without its organisation ("Qwen/").
std::string_view Checkpoint(std::string_view id) {
  size_t slash = id.rfind('/');
  return slash == std::string_view::npos ? id : id.substr(slash + 1);
}

}  // namespace

const LlmModel* LlmModelTable::FindAlias(const std::string& id) const {
  const std::string want = Lower(id);
  const std::string want_checkpoint = Lower(Checkpoint(id));
  for (const LlmModel& m : models_) {
    for (const std::string& alias : m.aliases) {
      const std::string a = Lower(alias);
      if (a == want || Lower(Checkpoint(alias)) == want_checkpoint) return &m;
    }
  }
  return nullptr;
}

std::vector<std::string> ServedNames(const std::string& service,
                                     const std::string& model,
                                     const LlmModel* entry) {
  std::vector<std::string> names = {service};
  auto add = [&](const std::string& name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
  };
  add(model);
  if (entry != nullptr) {
    for (const std::string& alias : entry->aliases) add(alias);
  }
  return names;
}

nlohmann::json LlmModelJson(const LlmModel& m) {
  nlohmann::json j = {{"name", m.name}};
  if (!m.aliases.empty()) j["aliases"] = m.aliases;
  j["parameters_b"] = m.parameters_b;
  if (m.active_parameters_b > 0)
    j["active_parameters_b"] = m.active_parameters_b;
  if (m.experts > 0) {
    j["experts"] = m.experts;
    j["experts_per_token"] = m.experts_per_token;
  }
  j["layers"] = m.layers;
  if (m.attention_heads > 0) j["attention_heads"] = m.attention_heads;
  j["kv_heads"] = m.kv_heads;
  j["head_dim"] = m.head_dim;
  j["dtype"] = m.dtype;
  if (!m.expert_dtype.empty()) j["expert_dtype"] = m.expert_dtype;
  if (!m.kv_dtype.empty()) j["kv_dtype"] = m.kv_dtype;
  if (m.max_context > 0) j["max_context"] = m.max_context;
  return j;
}

bool SameLlmModel(const LlmModel& a, const LlmModel& b) {
  return LlmModelJson(a) == LlmModelJson(b);
}

StatusOr<LlmModelTable> ParseLlmModelsJson(const nlohmann::json& models,
                                           const std::string& source) {
  if (!models.is_array()) {
    return Status::InvalidArgument(source + ": expected a list of models");
  }
  // JSON is YAML's flow style: the table's one reader reads it.
  return ParseLlmModels("models: " + models.dump() + "\n", source);
}

StatusOr<LlmModelTable> ParseLlmModels(const std::string& yaml,
                                       const std::string& source) {
  MIGSERVE_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(yaml, source));
  MIGSERVE_ASSIGN_OR_RETURN(YamlMap map, YamlMap::Open(root, source, ""));
  MIGSERVE_RETURN_IF_ERROR(map.CheckKeys({"models"}));
  MIGSERVE_ASSIGN_OR_RETURN(std::vector<YAML::Node> nodes,
                            map.Sequence("models", true));
  std::vector<LlmModel> models;
  for (size_t i = 0; i < nodes.size(); ++i) {
    MIGSERVE_ASSIGN_OR_RETURN(
        LlmModel m, ParseModel(nodes[i], source, fmt::format("models[{}]", i)));
    for (const LlmModel& seen : models) {
      if (seen.name == m.name) {
        return Status::InvalidArgument(
            fmt::format("{}:{}: models[{}].name: '{}' is already on line {}",
                        source, m.line, i, m.name, seen.line));
      }
    }
    models.push_back(std::move(m));
  }
  // An alias names one model: the one an importer then gives the run. The
  // first model an alias finds is the one listed first. No alias is
  // another model's name: a request naming it would reach either.
  // By name and by lower-cased checkpoint (what FindAlias matches on), so
  // that a table of many aliases is checked in one pass.
  LlmModelTable table(std::move(models));
  std::map<std::string, const LlmModel*> by_name;
  std::map<std::string, const LlmModel*> by_checkpoint;
  for (const LlmModel& m : table.models()) {
    by_name.emplace(m.name, &m);
    for (const std::string& alias : m.aliases) {
      by_checkpoint.emplace(Lower(Checkpoint(alias)), &m);
    }
  }
  for (size_t i = 0; i < table.models().size(); ++i) {
    const LlmModel& m = table.models()[i];
    for (const std::string& alias : m.aliases) {
      if (auto other = by_name.find(alias);
          other != by_name.end() && other->second != &m) {
        return Status::InvalidArgument(fmt::format(
            "{}:{}: models[{}].aliases: '{}' is the name of the model on "
            "line {}",
            source, m.line, i, alias, other->second->line));
      }
      const LlmModel* first = by_checkpoint.at(Lower(Checkpoint(alias)));
      if (first != &m) {
        return Status::InvalidArgument(fmt::format(
            "{}:{}: models[{}].aliases: '{}' is already {}'s (line {})", source,
            m.line, i, alias, first->name, first->line));
      }
    }
  }
  return table;
}

StatusOr<LlmModelTable> LoadLlmModels(const std::string& path) {
  MIGSERVE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseLlmModels(text, path);
}

const LlmModelTable& ShippedLlmModels() {
  static const LlmModelTable* table = [] {
    StatusOr<LlmModelTable> t =
        ParseLlmModels(kEmbeddedLlmModels, "data/llm/models.yaml");
    // A build whose shipped table does not parse fails its first test.
    return new LlmModelTable(t.ok() ? std::move(*t) : LlmModelTable());
  }();
  return *table;
}

std::shared_ptr<const LlmModelTable> SharedShippedLlmModels() {
  return std::shared_ptr<const LlmModelTable>(&ShippedLlmModels(),
                                              [](const LlmModelTable*) {});
}

}  // namespace migserve::llm
