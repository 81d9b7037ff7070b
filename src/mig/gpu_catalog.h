// The GPU models migserve knows: the tables of data/gpus/, compiled into the
// binary so that it runs from any directory, and tables a user adds at run
// time (`--gpu-table FILE`).
#ifndef MIGSERVE_MIG_GPU_CATALOG_H_
#define MIGSERVE_MIG_GPU_CATALOG_H_

#include <deque>
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

// Reads and parses the table in the file `path`. Returns NotFound if it
// cannot be read, InvalidArgument as ParseGpuModel.
StatusOr<GpuModel> LoadGpuModel(const std::string& path);

class GpuCatalog {
 public:
  // Returns the catalog of the embedded tables, plus those added with
  // AddToDefault. The embedded tables are checked by tests; a malformed one
  // is a build defect and aborts.
  static const GpuCatalog& Default();

  // Adds `model` to the default catalog (REQUIRES: no concurrent use of the
  // catalog). Adding a table equal to one already there does nothing.
  // Returns InvalidArgument if its name or an alias names another model,
  // FailedPrecondition while the registries are frozen
  // (util/registry_freeze.h: the CLI adds the `--gpu-table` files while it
  // parses the flags and holds a FreezeRegistries while the command runs).
  static Status AddToDefault(GpuModel model);

  explicit GpuCatalog(std::vector<GpuModel> models);

  // Every model, in the order added; the pointers stay valid for the
  // catalog's lifetime.
  std::vector<const GpuModel*> models() const;

  // Returns the model named `name` (or with it as an alias), or NotFound
  // listing the known names.
  StatusOr<const GpuModel*> Find(std::string_view name) const;

  // Returns the model of the product with `pci_device_id` (16-bit device id
  // or NVML's pciDeviceId); tables added later win over earlier ones.
  // Returns NotFound naming the id if no table lists it.
  StatusOr<const GpuModel*> FindByPciDeviceId(unsigned int pci_device_id) const;

 private:
  Status Add(GpuModel model);

  std::deque<GpuModel> models_;  // a deque keeps pointers valid on Add
};

}  // namespace migserve::mig

#endif  // MIGSERVE_MIG_GPU_CATALOG_H_
