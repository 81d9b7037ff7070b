// A language model as the LLM capacity model reads it (docs/llm.md): how
// many bytes its weights take and how many its KV cache takes per token.
// The shipped table (data/llm/models.yaml, embedded at build time) holds a
// few open models of 8B parameters or fewer; a workload may name a table
// of its own (`llm_models: FILE`, the same format).
#ifndef MIGSERVE_LLM_LLM_MODEL_H_
#define MIGSERVE_LLM_LLM_MODEL_H_

#include <string>
#include <vector>

#include "util/status_or.h"

namespace migserve::llm {

struct LlmModel {
  std::string name;
  double parameters_b = 0;  // billions
  int layers = 0;
  int kv_heads = 0;
  int head_dim = 0;
  std::string dtype = "bf16";  // bf16, fp16 or fp8: weights and KV cache
  int line = 0;                // in the table's file; 0 if made in memory

  double BytesPerValue() const { return dtype == "fp8" ? 1 : 2; }
  double WeightBytes() const { return parameters_b * 1e9 * BytesPerValue(); }
  // Keys and values of every layer for one token.
  double KvBytesPerToken() const {
    return 2.0 * layers * kv_heads * head_dim * BytesPerValue();
  }
  // Floating-point operations per token through the weights (2 per
  // parameter: a multiply and an add).
  double FlopsPerToken() const { return 2 * parameters_b * 1e9; }
};

class LlmModelTable {
 public:
  LlmModelTable() = default;
  explicit LlmModelTable(std::vector<LlmModel> models)
      : models_(std::move(models)) {}

  // The model named `name`; NotFound listing the known names if none.
  StatusOr<const LlmModel*> Find(const std::string& name) const;
  const std::vector<LlmModel>& models() const { return models_; }

 private:
  std::vector<LlmModel> models_;
};

// Parses a table (`models:` a list of name, parameters_b, layers,
// kv_heads, head_dim, dtype); InvalidArgument naming `source`, the line and
// the field of the first thing wrong (a duplicate name included).
StatusOr<LlmModelTable> ParseLlmModels(const std::string& yaml,
                                       const std::string& source);
StatusOr<LlmModelTable> LoadLlmModels(const std::string& path);

// The shipped table, data/llm/models.yaml.
const LlmModelTable& ShippedLlmModels();

}  // namespace migserve::llm

#endif  // MIGSERVE_LLM_LLM_MODEL_H_
