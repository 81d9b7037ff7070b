// The flags that say how replicas run, shared by `export` and `controller`:
// --serving (the serving spec, docs/serving.md) and --image/--port, which
// override its template.
#ifndef MIGSERVE_CLI_SERVING_FLAGS_H_
#define MIGSERVE_CLI_SERVING_FLAGS_H_

#include <CLI/CLI.hpp>
#include <string>

#include "kubernetes/serving_spec.h"

namespace migserve::cli {

void AddServingOptions(CLI::App* app, std::string* serving, std::string* image,
                       int* port);

// Sets the template's image (if `image` is not empty) and its one port,
// named http (if `port` is not 0).
void OverrideTemplate(const std::string& image, int port,
                      kubernetes::ServingSpec* spec);

}  // namespace migserve::cli

#endif  // MIGSERVE_CLI_SERVING_FLAGS_H_
