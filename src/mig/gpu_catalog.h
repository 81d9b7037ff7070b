// The GPU models migserve knows: the tables of data/gpus/, compiled into the
// binary so that it runs from any directory.
#ifndef MIGSERVE_MIG_GPU_CATALOG_H_
#define MIGSERVE_MIG_GPU_CATALOG_H_

#include <string>
#include <string_view>
#include <vector>

#include "mig/gpu_model.h"
#include "util/status_or.h"

namespace migserve::mig {

// Parses one table (the YAML of data/gpus/). Returns InvalidArgument
// "source:line: field: reason" if it is malformed.
StatusOr<GpuModel> ParseGpuModel(const std::string& yaml,
                                 const std::string& source);

class GpuCatalog {
 public:
  // Returns the catalog of the embedded tables. The tables are checked by
  // tests; a malformed one is a build defect and aborts.
  static const GpuCatalog& Default();

  explicit GpuCatalog(std::vector<GpuModel> models)
      : models_(std::move(models)) {}

  const std::vector<GpuModel>& models() const { return models_; }

  // Returns the model named `name`, or NotFound listing the known names.
  StatusOr<const GpuModel*> Find(std::string_view name) const;

 private:
  std::vector<GpuModel> models_;
};

}  // namespace migserve::mig

#endif  // MIGSERVE_MIG_GPU_CATALOG_H_
