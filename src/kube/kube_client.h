// A small client of the Kubernetes API over HTTPS (libcurl): JSON objects
// by path, label selectors, merge patches, watches. Transient failures
// (connection errors, 429, 5xx) are retried with exponential backoff;
// answers map to Status: 404 NotFound, 409 Aborted (conflict or already
// exists), 401/403 FailedPrecondition, other 4xx InvalidArgument, and
// Unavailable once retries are spent. Messages name the method and path,
// never the credentials.
#ifndef MIGSERVE_KUBE_KUBE_CLIENT_H_
#define MIGSERVE_KUBE_KUBE_CLIENT_H_

#include <atomic>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "kube/kube_config.h"
#include "util/status_or.h"

namespace migserve::kube {

struct RetryPolicy {
  int attempts = 5;
  double first_backoff_s = 0.2;  // doubles after each failed attempt
  double timeout_s = 30;         // per request, watches excepted
};

class KubeClient {
 public:
  // Requests reuse one connection; they may come from several threads.
  // Every request fails, none sent, if CheckTransport refuses `config`.
  explicit KubeClient(KubeConfig config, RetryPolicy retry = {});
  ~KubeClient();
  KubeClient(KubeClient&&) noexcept;

  const KubeConfig& config() const { return config_; }

  // GET `path` (for example /api/v1/nodes/node-0).
  StatusOr<nlohmann::json> Get(const std::string& path);
  // GET the collection `path` with `query` (for example
  // "labelSelector=a%3Db"); returns the list object (items, metadata).
  StatusOr<nlohmann::json> List(const std::string& path,
                                const std::string& query = "");
  // POST `object` to the collection `path`.
  StatusOr<nlohmann::json> Create(const std::string& path,
                                  const nlohmann::json& object);
  // PATCH `path` with a JSON merge patch (RFC 7386).
  StatusOr<nlohmann::json> Patch(const std::string& path,
                                 const nlohmann::json& patch);
  // PATCH `path` with a JSON patch (RFC 6902): a list of operations the
  // API server applies atomically, all or none. A `test` operation that
  // fails (HTTP 422) is Aborted, as a conflict is: the object is not as
  // the writer saw it.
  StatusOr<nlohmann::json> JsonPatch(const std::string& path,
                                     const nlohmann::json& operations);
  // DELETE `path`, with `options` (a DeleteOptions object, such as
  // preconditions on the uid) unless null.
  Status Delete(const std::string& path,
                const nlohmann::json& options = nullptr);
  // Watches the collection `path` (with `query`) from `resource_version`:
  // calls `on_event` with each event ({type, object}) until it returns
  // false, the server closes the stream, `timeout_s` passes or `*stop`
  // turns true.
  Status Watch(const std::string& path, const std::string& query,
               const std::string& resource_version, int timeout_s,
               const std::function<bool(const nlohmann::json&)>& on_event,
               const std::atomic<bool>* stop = nullptr);

  // Asks `fence` before every attempt of every request that is not a GET
  // (a watch included in neither): an error is returned as it is, nothing
  // sent. The leader's writes ask its lease (LeaderLease::Fence), so that
  // a controller that cannot prove it still leads writes nothing, the
  // writes of actions already running included. Set before requests are
  // made; empty: none.
  void SetFence(std::function<Status()> fence) { fence_ = std::move(fence); }
  // The fence's answer now (OK where none is set): what a caller asks that
  // waits rather than writes, so that a deposed leader ends its waits too
  // (issue 91: one waiting on a MIG request ran on to its action timeout).
  Status CheckFence() const { return fence_ ? fence_() : Status::Ok(); }

  // HTTP requests sent so far (each attempt and each watch counts), and
  // those of them that were not GETs.
  long requests() const;
  long writes() const;

  // Percent-encodes `text` for a query string.
  static std::string Escape(const std::string& text);

 private:
  struct Response {
    long code = 0;
    std::string body;
  };
  StatusOr<nlohmann::json> Call(const std::string& method,
                                const std::string& path,
                                const std::string& body,
                                const std::string& content_type);
  // One attempt with `credential`; a transport error is an Unavailable
  // status.
  StatusOr<Response> Once(const std::string& method, const std::string& url,
                          const std::string& body,
                          const std::string& content_type,
                          const Credential& credential);
  // The config's token or client certificate, or its plugin's credential.
  StatusOr<Credential> CurrentCredential() const;

  struct Connection;

  KubeConfig config_;
  RetryPolicy retry_;
  // CheckTransport's answer: when not OK, no request is sent.
  Status transport_;
  std::function<Status()> fence_;
  std::unique_ptr<Connection> connection_;
};

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_KUBE_CLIENT_H_
