// A service's serving as JSON (docs/formats.md, "Serve JSON"), both ways:
// the entries of `serve --format json`'s `services`, and what `report
// --serve` reads back, in one place beside the type.
#ifndef MIGSERVE_SERVING_SERVE_JSON_H_
#define MIGSERVE_SERVING_SERVE_JSON_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serving/serve.h"
#include "util/status_or.h"

namespace migserve::serving {

nlohmann::ordered_json ServiceJson(const ServiceServing& service);

// Reads the `services` of a `serve --format json` document from `source`:
// each service's name, SLO, p50, p90 and p99 latencies and share within the
// SLO are required, the rest read where present. Returns InvalidArgument
// naming the source and the field at fault.
StatusOr<std::vector<ServiceServing>> ParseServeJson(const std::string& text,
                                                     const std::string& source);

}  // namespace migserve::serving

#endif  // MIGSERVE_SERVING_SERVE_JSON_H_
