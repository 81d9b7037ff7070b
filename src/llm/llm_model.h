// A language model as the LLM capacity model reads it (docs/llm.md): how
// many bytes its weights take and how many its KV cache takes per token.
// The shipped table (data/llm/models.yaml, embedded at build time) holds a
// few open dense models and mixtures of experts, each of a size some slice
// of some GPU holds; a workload may name a table of its own (`llm_models:
// FILE`, the same format).
#ifndef MIGSERVE_LLM_LLM_MODEL_H_
#define MIGSERVE_LLM_LLM_MODEL_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "util/status_or.h"

namespace migserve::llm {

// The mean number of distinct experts `tokens` tokens pick, each picking
// `per_token` of `experts` at random: E (1 - (1 - k/E)^tokens).
double ExpertsTouched(int experts, int per_token, double tokens);

struct LlmModel {
  std::string name;
  // The checkpoints that run this model, as their ids name them on Hugging
  // Face (meta-llama/Llama-3.1-8B-Instruct: an instruct model has its
  // base's architecture): what an importer meets in a benchmark's results.
  std::vector<std::string> aliases;
  double parameters_b = 0;  // billions, every expert's
  // Billions a token goes through (a mixture of experts' shared weights
  // and its experts_per_token experts); 0: parameters_b (a dense model).
  double active_parameters_b = 0;
  int experts = 0;            // routed experts per layer; 0: dense
  int experts_per_token = 0;  // of them, each token's
  int layers = 0;
  int attention_heads = 0;  // query heads; 0: kv_heads (no grouping)
  int kv_heads = 0;
  int head_dim = 0;
  // The weights: bf16, fp16, fp8 or mxfp4 (4-bit values with an 8-bit
  // scale per 32: 4.25 bits).
  std::string dtype = "bf16";
  // A mixture's routed experts' weights where they differ from the rest
  // (gpt-oss ships its experts in mxfp4, attention and the rest in bf16);
  // "": dtype.
  std::string expert_dtype;
  // The KV cache's values (vLLM's --kv-cache-dtype): "" for the model's
  // activations, bf16 (fp16 for an fp16 model), as vLLM keeps it unless
  // told; fp8 halves it.
  std::string kv_dtype;
  // The longest sequence the model takes (config.json's
  // max_position_embeddings): vLLM refuses a longer --max-model-len. 0:
  // not in the table.
  int max_context = 0;
  int line = 0;  // in the table's file; 0 if made in memory

  double BytesPerValue() const { return BytesOf(dtype); }
  double ExpertBytesPerValue() const {
    return BytesOf(expert_dtype.empty() ? dtype : expert_dtype);
  }
  double KvBytesPerValue() const { return KvDtype() == "fp8" ? 1 : 2; }
  // kv_dtype spelled out: the activations' dtype where it is "".
  std::string KvDtype() const {
    if (!kv_dtype.empty()) return kv_dtype;
    return dtype == "fp16" ? "fp16" : "bf16";
  }
  // The shared weights at dtype, the routed experts' at expert_dtype.
  double WeightBytes() const;
  double ActiveParametersB() const {
    return active_parameters_b > 0 ? active_parameters_b : parameters_b;
  }
  int AttentionHeads() const {
    return attention_heads > 0 ? attention_heads : kv_heads;
  }
  // Keys and values of every layer for one token.
  double KvBytesPerToken() const {
    return 2.0 * layers * kv_heads * head_dim * KvBytesPerValue();
  }
  // Floating-point operations per token through the weights it touches (2
  // per active parameter: a multiply and an add).
  double FlopsPerToken() const { return 2 * ActiveParametersB() * 1e9; }
  // Attention's operations for one token over one token of its context:
  // its query against the key (2 per value) and the value's weighting (2),
  // every head of every layer.
  double AttentionFlopsPerContextToken() const {
    return 4.0 * layers * AttentionHeads() * head_dim;
  }
  // The weight bytes one step reads when `tokens` tokens go through the
  // model: a dense model's every weight; a mixture's shared weights and
  // the experts its tokens pick, each expert picked at random by each
  // token, experts_per_token of `experts` (so the mean number of distinct
  // experts E (1 - (1 - k/E)^tokens)).
  double WeightBytesRead(double tokens) const;
  // One expert's weights over every layer, from the total (shared +
  // experts x expert) and the active (shared + per_token x expert)
  // parameters; 0 for a dense model.
  double ExpertBytes() const;
  // One expert's parameters over every layer, billions (ExpertBytes's
  // split); 0 for a dense model.
  double ExpertParametersB() const;

 private:
  static double BytesOf(const std::string& dtype) {
    return dtype == "fp8" ? 1 : dtype == "mxfp4" ? 4.25 / 8 : 2;
  }
};

class LlmModelTable {
 public:
  LlmModelTable() = default;
  explicit LlmModelTable(std::vector<LlmModel> models)
      : models_(std::move(models)) {}

  // The model named `name`; NotFound listing the known names if none.
  StatusOr<const LlmModel*> Find(const std::string& name) const;
  // The model a checkpoint id names: one of its aliases, letter case
  // aside, with or without the id's organisation ("Qwen/"); else null.
  const LlmModel* FindAlias(const std::string& id) const;
  const std::vector<LlmModel>& models() const { return models_; }

 private:
  std::vector<LlmModel> models_;
};

// The names a replica of `service` running `model` answers to, as the
// proxy routes them and vLLM's --served-model-name lists them: the
// service, then the model, then the aliases of `entry`, the model's entry
// in the table its credits came from (none where null), each once. vLLM
// compares them as written (letter case included) and reports the first
// in its metrics.
std::vector<std::string> ServedNames(const std::string& service,
                                     const std::string& model,
                                     const LlmModel* entry);

// `model` as a JSON object of the table's fields (those at their defaults
// left out): what a deployment carries of a table not shipped.
nlohmann::json LlmModelJson(const LlmModel& model);
// Whether `a` and `b` are the same entry, wherever each was read.
bool SameLlmModel(const LlmModel& a, const LlmModel& b);

// Parses `models`, a JSON array of LlmModelJson objects read from `source`,
// as ParseLlmModels does a table.
StatusOr<LlmModelTable> ParseLlmModelsJson(const nlohmann::json& models,
                                           const std::string& source);

// Parses a table (`models:` a list of name, parameters_b, layers,
// kv_heads, head_dim, dtype); InvalidArgument naming `source`, the line and
// the field of the first thing wrong (a duplicate name included).
StatusOr<LlmModelTable> ParseLlmModels(const std::string& yaml,
                                       const std::string& source);
StatusOr<LlmModelTable> LoadLlmModels(const std::string& path);

// The shipped table, data/llm/models.yaml.
const LlmModelTable& ShippedLlmModels();
// The same, shared (not owned): for what holds a table or its entries.
std::shared_ptr<const LlmModelTable> SharedShippedLlmModels();

}  // namespace migserve::llm

#endif  // MIGSERVE_LLM_LLM_MODEL_H_
