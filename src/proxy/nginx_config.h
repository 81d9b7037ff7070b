// A ProxyConfig as an NGINX configuration (docs/serving.md, "The proxy";
// language models' OpenAI API: docs/llm.md, "Through the proxy"): per
// service an upstream of its replicas with `weight=` (smooth weighted
// round robin) in a shared `zone`, so that every worker process of one
// instance turns the same rotation, for HTTP and (on its own listener, over
// HTTP/2) for gRPC. A request reaches the service its `migserve-service`
// header names; without the header an HTTP request to /v2/models/<model>...
// reaches the one service of that model, and a gRPC call the one service
// there is. What cannot be routed is answered with the reason (HTTP 404,
// 400 when several services serve the model; gRPC statuses NOT_FOUND,
// INVALID_ARGUMENT), a service without replicas with 503 (UNAVAILABLE). A
// replica without traffic is not listed. The proxy answers its own health
// (/v2/health/live, /v2/health/ready) and `GET /migserve/generation`, the
// generation the configuration carries (503 at generation 0: no routes read
// yet, so the proxy is not ready), which is how the control plane learns
// that an instance applied it (after a reload, new requests reach only
// workers with the new one).
#ifndef MIGSERVE_PROXY_NGINX_CONFIG_H_
#define MIGSERVE_PROXY_NGINX_CONFIG_H_

#include <optional>
#include <string>

#include "boundary/checked_name.h"
#include "boundary/endpoint.h"
#include "boundary/quantity.h"
#include "kubernetes/routing/proxy_routes.h"
#include "proxy/proxy_config.h"

namespace migserve::proxy {

struct NginxSetup {
  // Where it serves HTTP, and gRPC (none: no gRPC listener).
  Endpoint listen = *Endpoint::Parse("0.0.0.0", 8080);
  std::optional<Endpoint> grpc_listen;
  ConfigWord prefix = *ConfigWord::Parse("");  // run files (pid, logs, temp)
  int worker_processes = 0;                    // 0: auto
  bool daemon = false;                         // false: stays in the foreground
  // How long an old worker may finish its requests after a reload, and how
  // long NginxProcess::ApplyAndDrain waits for them. Where a language
  // model's service is served, an old worker keeps its streams up to
  // llm_idle_timeout (nginx's worker_shutdown_timeout is the larger).
  Duration drain_timeout = *Duration::Of(30);
  // A language model's requests keep to their conversation's replica
  // where its service asks for it (ProxyUpstream::affinity; docs/llm.md,
  // "Prefix affinity"): a ring weighted by the credits, a replica with its
  // batch in flight passing requests on. false: every language model's
  // service balanced by the fewest requests in flight per weight.
  bool llm_affinity = true;
  // Weighted random instead of smooth weighted round robin (a stand-in for
  // the balancers `router: random` assumes; tests compare the two).
  bool random = false;
  // Sent as the header X-Migserve-Instance with /migserve/generation, so
  // that the process that runs nginx knows its own instance answered and
  // not another process on the port. Letters and digits; "": none.
  ConfigWord instance = *ConfigWord::Parse("");
  // Language models' services (ProxyUpstream::openai) need nginx's
  // JavaScript module (Debian's libnginx-mod-http-js) to read a request's
  // `model`, and the script OpenAiScript() returns; neither is loaded
  // without them. Empty js_script: <prefix>/migserve-openai.js.
  ConfigWord js_module =
      *ConfigWord::Parse("/usr/lib/nginx/modules/ngx_http_js_module.so");
  ConfigWord js_script = *ConfigWord::Parse("");
  // Seconds a streamed generation may go without a byte before the proxy
  // ends it (nginx's proxy_read_timeout; its 60 s default cuts long ones).
  Duration llm_idle_timeout = *Duration::Of(3600);
  // Largest OpenAI request body the proxy reads to route it.
  int llm_max_body_mb = 16;
  // The memory the proxy's container may use (the exported proxy's limit):
  // LargeBodiesAtOnce derives from it how many large bodies it takes.
  int memory_limit_mb = kubernetes::kProxyMemoryLimitMiB;
};

// What one OpenAI request holds in the proxy: its body in nginx's buffer
// while it is served, and while the script reads its `model` a second
// copy (the body's text: the script scans it and parses none of it, so
// nothing grows with the JSON's shape), so at most twice the largest body
// and a MiB. Bodies of 1 MB or more (or chunked, their size unknown) are
// "large": the proxy takes this many at once, all workers together, and
// answers the next 429 until one ends: what fits in the memory limit
// beside 96 MiB for the router, nginx and the small bodies. At least 1.
int LargeBodiesAtOnce(const NginxSetup& setup);

// The nginx configuration of `config` under `setup`.
std::string RenderNginxConfig(const ProxyConfig& config,
                              const NginxSetup& setup);

// Whether `config` has a language model's service (the configuration then
// loads the JavaScript module and imports the script).
bool NeedsOpenAiScript(const ProxyConfig& config);

// The path the configuration imports the script from.
std::string OpenAiScriptPath(const NginxSetup& setup);

// The script (nginx JavaScript) that reads an OpenAI request's body and
// hands it, its `model` noted, to the location that routes it.
std::string OpenAiScript();

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_NGINX_CONFIG_H_
