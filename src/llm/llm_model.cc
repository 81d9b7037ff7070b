#include "llm/llm_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "llm/embedded_llm_models.h"
#include "util/file.h"
#include "util/plain_name.h"
#include "util/yaml_map.h"

namespace migserve::llm {
namespace {

StatusOr<LlmModel> ParseModel(const YAML::Node& node, const std::string& source,
                              const std::string& path) {
  MIGSERVE_ASSIGN_OR_RETURN(YamlMap map, YamlMap::Open(node, source, path));
  MIGSERVE_RETURN_IF_ERROR(map.CheckKeys(
      {"name", "parameters_b", "layers", "kv_heads", "head_dim", "dtype"}));
  LlmModel m;
  m.line = map.line();
  MIGSERVE_RETURN_IF_ERROR(map.Required("name", &m.name));
  if (std::string problem = PlainNameProblem(m.name); !problem.empty()) {
    return map.Error("name", problem);
  }
  MIGSERVE_RETURN_IF_ERROR(
      map.Required("parameters_b", &m.parameters_b, {0.001, 10000}));
  for (auto [key, out] :
       {std::pair{"layers", &m.layers}, std::pair{"kv_heads", &m.kv_heads},
        std::pair{"head_dim", &m.head_dim}}) {
    MIGSERVE_RETURN_IF_ERROR(map.Required(key, out));
    if (*out < 1 || *out > 100000) {
      return map.Error(key,
                       fmt::format("must be from 1 to 100000, got {}", *out));
    }
  }
  MIGSERVE_RETURN_IF_ERROR(map.Optional("dtype", &m.dtype));
  if (m.dtype != "bf16" && m.dtype != "fp16" && m.dtype != "fp8") {
    return map.Error("dtype", "must be bf16, fp16 or fp8, got " + m.dtype);
  }
  return m;
}

}  // namespace

StatusOr<const LlmModel*> LlmModelTable::Find(const std::string& name) const {
  std::vector<std::string> names;
  for (const LlmModel& m : models_) {
    if (m.name == name) return &m;
    names.push_back(m.name);
  }
  return Status::NotFound(fmt::format("unknown LLM model '{}' (known: {})",
                                      name, fmt::join(names, ", ")));
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
  return LlmModelTable(std::move(models));
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

}  // namespace migserve::llm
