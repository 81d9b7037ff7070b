// One NGINX instance run by migserve as the data plane of the `proxy` router
// (docs/serving.md, "The proxy"): started in the foreground as a child, its
// configuration rewritten whole (temp file, then rename) and checked with
// `nginx -t` before the master is told to reload (SIGHUP: new workers take
// new connections, old ones finish the requests they hold, so no request
// in flight is dropped), and stopped gracefully (SIGQUIT). It is
// supervised: started only once it answers on its port as itself (a token
// of this instance, not whatever else listens there), and restarted if its
// master dies or it stops answering, its orphaned workers killed first.
#ifndef MIGSERVE_PROXY_NGINX_PROCESS_H_
#define MIGSERVE_PROXY_NGINX_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "proxy/nginx_config.h"
#include "proxy/proxy_config.h"
#include "util/log_sink.h"
#include "util/status_or.h"

namespace migserve::proxy {

class NginxProcess {
 public:
  // Writes `config` under `setup.prefix` (created if missing) as
  // nginx.conf, starts `binary` on it and waits (10 s at most) until this
  // instance answers on its port. Returns Unavailable if nginx cannot start
  // or does not answer (its log's last lines in the message).
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
  // held and exited (nginx bounds that by the setup's drain_timeout; this
  // waits 5 s more). Returns DeadlineExceeded if either does not happen.
  // Where `config` serves a language model, old workers still open after
  // drain_timeout hold streams nginx lets run (up to llm_idle_timeout):
  // they take no new request, so the change is applied, and they are left
  // to end with their streams (killed with the rest on a restart).
  Status ApplyAndDrain(const ProxyConfig& config);

  // Returns Ok while the master runs and this instance answers on its
  // port, else Unavailable saying what is wrong.
  Status Check();

  // Checks; if the check fails, logs why, kills what is left of this
  // instance (the master, its workers, orphaned or not) and starts it again
  // on the live configuration. Returns an error only if it cannot restart.
  Status Supervise(const LogSink& log);

  // The path of the configuration file.
  std::string ConfigPath() const;
  pid_t pid() const { return pid_; }

 private:
  NginxProcess(std::string binary, NginxSetup setup)
      : binary_(std::move(binary)), setup_(std::move(setup)) {}
  Status Write(const ProxyConfig& config) const;
  // The port of setup_.listen ("address:port" or "port"), and the address
  // to reach it on (127.0.0.1 for every address).
  int ListenPort() const;
  std::string ListenHost() const;
  // Whether this instance (its setup's token) answers on its port.
  bool Answers() const;
  // Spawns nginx on the live configuration and waits until it answers.
  Status Launch();
  // Kills the master and every worker it was seen with.
  void KillAll();

  std::string binary_;
  NginxSetup setup_;
  pid_t pid_ = -1;
  std::vector<pid_t> draining_;  // workers of the configuration replaced
  // Old workers left to finish language models' streams (ApplyAndDrain):
  // not waited for again at the next change.
  std::vector<pid_t> lingering_;
  std::vector<pid_t> workers_;  // seen at the last check
  int unanswered_ = 0;          // checks in a row it did not answer
};

// Writes the script `config`'s configuration imports (OpenAiScript, at
// OpenAiScriptPath) where it has a language model's service, creating the
// run directory; nothing otherwise. The script is the same for every
// generation. `with`: files (path, contents) written with it as one set
// (WriteFilesAtomic: a failure leaves the old set), such as the
// configuration that imports it.
Status WriteOpenAiScript(
    const ProxyConfig& config, const NginxSetup& setup,
    std::vector<std::pair<std::string, std::string>> with = {});

// Asks the proxy at `host`:`port` which generation it serves (GET
// /migserve/generation) until it is at least `generation`, for at most
// `timeout_s`; with `instance`, only answers of that instance
// (NginxSetup::instance) count. Returns DeadlineExceeded naming the
// generation last seen.
Status WaitForGeneration(const std::string& host, int port, long generation,
                         double timeout_s, const std::string& instance = "");

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_NGINX_PROCESS_H_
