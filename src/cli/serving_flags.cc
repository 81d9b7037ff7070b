#include "cli/serving_flags.h"

#include "boundary/plain_name.h"
#include "cli/flag_checks.h"

namespace migserve::cli {

void AddServingOptions(CLI::App* app, std::string* serving, std::string* image,
                       int* port) {
  app->add_option("--serving", *serving,
                  "Serving spec YAML: pod template, per-service overrides, "
                  "gateway for routes (docs/serving.md)")
      ->check(CLI::ExistingFile);
  app->add_option("--image", *image,
                  "Serving container image (overrides the spec's; default "
                  "nvcr.io/nvidia/tritonserver:24.08-py3)")
      ->check([](const std::string& value) -> std::string {
        return value.empty() ? "must name an image" : WordProblem(value);
      });
  app->add_option("--port", *port,
                  "The container's one HTTP port, named http (overrides the "
                  "spec's ports; default 8000)")
      ->check(Between(1, 65535));
}

void OverrideTemplate(const std::string& image, int port,
                      kubernetes::ServingSpec* spec) {
  if (!image.empty()) spec->pod["image"] = image;
  if (port != 0) {
    spec->pod["ports"] = nlohmann::ordered_json::array(
        {{{"name", "http"}, {"containerPort", port}}});
    for (auto& [service, fields] : spec->services) fields.erase("ports");
  }
}

}  // namespace migserve::cli
