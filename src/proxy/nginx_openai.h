// The OpenAI API's part of the proxy's nginx configuration
// (docs/serving.md, "The OpenAI API"): the names each language model's
// service answers to, the maps that pick a request's service from its
// body's model or its header, and the /v1/ locations that read the body
// (the njs script), refuse what cannot be routed with OpenAI's error
// objects, list the models, and pass a request on, streamed.
#ifndef MIGSERVE_PROXY_NGINX_OPENAI_H_
#define MIGSERVE_PROXY_NGINX_OPENAI_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "proxy/nginx_config.h"

namespace migserve::proxy {

// The names each OpenAI service answers to, and the service each name
// routes to: a service's own name always its own; its model's and the
// model's aliases its where no other service claims them, else kAmbiguous.
struct OpenAiNames {
  // Per name, its route token, in the order names are first met.
  std::vector<std::pair<std::string, std::string>> routes;
  // Per service, the names that route to it (its own first).
  std::map<std::string, std::vector<std::string>> of_service;
};

OpenAiNames NamesOf(const ProxyConfig& config);

// The maps that pick a language model's service.
std::string OpenAiMaps(const ProxyConfig& config, const OpenAiNames& names);

// The /v1/ locations of the HTTP server.
std::string OpenAiLocations(const ProxyConfig& config, const NginxSetup& setup,
                            const OpenAiNames& names);

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_NGINX_OPENAI_H_
