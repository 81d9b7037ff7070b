// A stand-in for the Kubernetes API server, for tests: the endpoints the
// backend, the agent and the controller use, with Kubernetes semantics
// (resourceVersion, 404, 409 AlreadyExists and Conflict, JSON merge
// patches, label and field selectors, watches), over HTTP or HTTPS, and
// with injectable failures. Objects are JSON kept in memory by path; tests
// read and change them directly (a fake kubelet marks pods Ready, say).
// Requests with the token of a user (a service account, say) are
// authorized by RBAC (rbac.h) against the Roles and bindings it holds,
// which tests load from the shipped manifests (ApplyManifests), and
// answered 403 as a real API server answers.
#ifndef MIGSERVE_KUBE_TESTING_API_SERVER_STANDIN_H_
#define MIGSERVE_KUBE_TESTING_API_SERVER_STANDIN_H_

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kube/kube_config.h"
#include "kube/testing/api_path.h"
#include "kube/testing/custom_resources.h"
#include "kube/testing/rbac.h"
#include "util/status.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace migserve::kube {

class ApiServerStandIn {
 public:
  struct Options {
    std::string cert_file;  // with key_file: HTTPS; else plain HTTP
    std::string key_file;
    // If set, requests need "Bearer <token>" (else 401): a cluster
    // administrator's, allowed everything.
    std::string token;
    int max_watch_s = 5;
    // Tokens of users (ServiceAccountUser, say) whose requests RBAC
    // authorizes; with any set, a bearer token that is neither `token` nor
    // one of these is answered 401.
    std::map<std::string, std::string> users = {};
  };
  // Called after every change with the event type (ADDED, MODIFIED,
  // DELETED), the object's path and the object; never under the lock.
  using Observer =
      std::function<void(const std::string& type, const std::string& path,
                         const nlohmann::json& object)>;

  explicit ApiServerStandIn(Options options);
  ~ApiServerStandIn();

  // Listens on 127.0.0.1 at a free port.
  Status Start();
  // https://localhost:<port> or http://127.0.0.1:<port>.
  std::string url() const;

  // Direct access. Put creates or replaces the object at `path` (an object
  // path such as /api/v1/nodes/node-0) and returns it as stored.
  std::optional<nlohmann::json> Get(const std::string& path) const;
  nlohmann::json Put(const std::string& path, nlohmann::json object);
  // Applies `change` to the object at `path` if it exists; returns false if
  // it does not.
  bool Update(const std::string& path,
              const std::function<void(nlohmann::json*)>& change);
  std::vector<nlohmann::json> List(const std::string& collection) const;
  // Calls `visit` with each object of `collection`, without a copy (the
  // server is locked meanwhile: `visit` must not call it).
  void Visit(const std::string& collection,
             const std::function<void(const nlohmann::json&)>& visit) const;

  // Compacts the history as etcd does: applies `quietly` to the objects by
  // path (no watch sees those changes), forgets every event so far and
  // ends each open watch with an ERROR event of code 410 (Expired); a watch
  // from an older version gets the same at once. Only a new listing shows
  // what changed.
  void Expire(const std::function<void(std::map<std::string, nlohmann::json>*)>&
                  quietly);

  void AddObserver(Observer observer);
  // The next `count` requests answer HTTP `code` and do nothing.
  void FailNext(int count, int code);
  // Requests served, and every header value seen (to check what is sent).
  int requests() const;
  // Requests other than GET (creates, updates, patches, deletes).
  int writes() const;
  // Requests served to one of the users (as Options::users names them).
  int requests(const std::string& user) const;

  // Stores every object of `yaml` (Kubernetes manifests, "---" between
  // them) at its path, as `kubectl apply` creates them, or only those of
  // `kinds` where given; `source` names it in errors.
  Status ApplyManifests(const std::string& yaml, const std::string& source,
                        const std::set<std::string>& kinds = {});
  // ApplyManifests of the repository's file `path` (deploy/base/crd.yaml,
  // say).
  Status ApplyShipped(const std::string& path);
  // A client's configuration for this server (plain HTTP allowed) in
  // `namespace_`, with bearer `token` ("" none).
  KubeConfig ClientConfig(const std::string& namespace_ = "default",
                          const std::string& token = "") const;

  // The text of a kubeconfig file for this server, as kubectl and the
  // commands read it: its URL, its certificate as the CA where it serves
  // HTTPS, `namespace_` in the context and a user with bearer `token` where
  // given.
  std::string KubeconfigYaml(const std::string& namespace_ = "",
                             const std::string& token = "") const;

  // What RBAC allowed each user so far (its user, verb, group, resource,
  // subresource and namespace; names left out).
  std::set<RbacRequest> Authorized() const;
  void ClearAuthorized();

 private:
  using Objects = std::map<std::string, nlohmann::json>;  // by path
  struct Event {
    long version;
    std::string type;
    std::string path;
    nlohmann::json object;
  };

  nlohmann::json Store(const std::string& path, nlohmann::json object,
                       const std::string& type,
                       std::unique_lock<std::mutex>* lock);
  void Notify(const Event& event);
  // Registers the handlers below on server_.
  void Route();
  // Counts the request; answers 401 without a known token, 403 where RBAC
  // does not allow a user's request, and an injected failure while one is
  // due. Returns true if it answered.
  bool Admit(const httplib::Request& req, httplib::Response* res);
  // The objects to look at for `collection`, some maybe of another (mu_
  // held).
  std::pair<Objects::const_iterator, Objects::const_iterator> Range(
      const ApiPath& collection) const;
  void HandleGet(const httplib::Request& req, httplib::Response* res);
  void Watch(const httplib::Request& req, httplib::Response* res);
  void HandleCreate(const httplib::Request& req, httplib::Response* res);
  // A PUT (replace) or a JSON merge PATCH.
  void HandleChange(const httplib::Request& req, httplib::Response* res,
                    bool patch);
  void HandleDelete(const httplib::Request& req, httplib::Response* res);
  // A change of a custom resource (mu_ held): through /status only its
  // status, else all but its status (with a status subresource) and the
  // metadata the server owns; checked against the schema; a changed spec
  // bumps metadata.generation. False if it answered (refused).
  bool ChangeCustom(const CustomResource& resource, const ApiPath& ref,
                    const httplib::Request& req, const nlohmann::json& before,
                    nlohmann::json* object, httplib::Response* res);

  Options options_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  Objects objects_;
  std::vector<Event> history_;
  long version_ = 1;
  long compacted_ = 0;  // history before this version is forgotten
  int expiries_ = 0;
  int fail_count_ = 0;
  int fail_code_ = 0;
  int requests_ = 0;
  int writes_ = 0;
  std::map<std::string, int> user_requests_;
  long generated_ = 0;  // names made from generateName
  std::set<RbacRequest> authorized_;
  bool stopping_ = false;
  std::vector<Observer> observers_;
};

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_TESTING_API_SERVER_STANDIN_H_
