// One NGINX instance run by migserve as the data plane of the `proxy` router
// (docs/serving.md, "The proxy"): started in the foreground as a child, its
// configuration rewritten whole (temp file, then rename) and checked with
// `nginx -t` before the master is told to reload (SIGHUP: new workers take
// new connections, old ones finish the requests they hold, so no request
// in flight is dropped), and stopped gracefully (SIGQUIT).
#ifndef MIGSERVE_PROXY_NGINX_PROCESS_H_
#define MIGSERVE_PROXY_NGINX_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "proxy/nginx_config.h"
#include "proxy/proxy_config.h"
#include "util/status_or.h"

namespace migserve::proxy {

class NginxProcess {
 public:
  // Writes `config` under `setup.prefix` (created if missing) as
  // nginx.conf and starts `binary` on it. Returns Unavailable if nginx
  // cannot start (its error log's last lines in the message).
  static StatusOr<std::unique_ptr<NginxProcess>> Start(
      const std::string& binary, const NginxSetup& setup,
      const ProxyConfig& config);

  NginxProcess(const NginxProcess&) = delete;
  NginxProcess& operator=(const NginxProcess&) = delete;
  // Stops nginx gracefully (SIGQUIT), then at once after 10 s.
  ~NginxProcess();

  // Makes `config` the live configuration: writes it, checks it with
  // `nginx -t` (the old one stays live if that fails) and reloads.
  Status Apply(const ProxyConfig& config);

  // Applies `config`, waits until the instance answers its generation, then
  // until the workers that served before have finished the requests they
  // held and exited (nginx bounds that by the setup's drain_timeout_s; this
  // waits 5 s more). Returns DeadlineExceeded if either does not happen.
  Status ApplyAndDrain(const ProxyConfig& config);

  // The path of the configuration file.
  std::string ConfigPath() const;
  pid_t pid() const { return pid_; }

 private:
  NginxProcess(std::string binary, NginxSetup setup)
      : binary_(std::move(binary)), setup_(std::move(setup)) {}
  Status Write(const ProxyConfig& config) const;
  // The port of setup_.listen ("address:port" or "port").
  int ListenPort() const;

  std::string binary_;
  NginxSetup setup_;
  pid_t pid_ = -1;
  std::vector<pid_t> draining_;  // workers of the configuration replaced
};

// Asks the proxy at `host`:`port` which generation it serves (GET
// /migserve/generation) until it is at least `generation`, for at most
// `timeout_s`. Returns DeadlineExceeded naming the generation last seen.
Status WaitForGeneration(const std::string& host, int port, long generation,
                         double timeout_s);

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_NGINX_PROCESS_H_
