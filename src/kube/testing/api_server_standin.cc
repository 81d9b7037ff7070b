#include "kube/testing/api_server_standin.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <httplib.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <sstream>

#include "boundary/input_file.h"
#include "kube/micro_time.h"
#include "kube/testing/api_path.h"
#include "kube/testing/custom_resources.h"
#include "kube/testing/strategic_merge_patch.h"
#include "kube/yaml_json.h"
#include "util/test_util.h"
#include "util/testing/http_listener.h"

namespace migserve::kube {
namespace {

using Json = nlohmann::json;

// The API server's rule for a core/v1 Event without eventTime (as
// kube::EventRecorder writes them): it lives in its object's namespace, or
// in "default" for a cluster-scoped object such as a Node. "" when `event`
// keeps it.
std::string EventNamespaceProblem(const ApiPath& ref, const Json& event) {
  if (ref.resource != "events" || !ref.Group().empty()) return "";
  auto involved = event.find("involvedObject");
  std::string object_ns = involved != event.end() && involved->is_object()
                              ? involved->value("namespace", "")
                              : "";
  bool kept = object_ns.empty() ? ref.ns.empty() || ref.ns == "default"
                                : ref.ns == object_ns;
  return kept ? ""
              : fmt::format(
                    "involvedObject.namespace: Invalid value: "
                    "\"{}\": does not match event.namespace",
                    object_ns);
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(' ');
  size_t e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Returns the value at dotted `field` of `object` as text, or nullopt.
std::optional<std::string> Field(const Json& object, const std::string& field) {
  const Json* at = &object;
  std::stringstream in(field);
  for (std::string key; std::getline(in, key, '.');) {
    if (!at->is_object() || !at->contains(key)) return std::nullopt;
    at = &(*at)[key];
  }
  return at->is_string() ? at->get<std::string>() : at->dump();
}

// Kubernetes selector terms: k=v, k==v, k!=v, k (exists), !k (absent).
// `lookup` returns the value of a key.
bool Matches(
    const std::string& selector,
    const std::function<std::optional<std::string>(const std::string&)>&
        lookup) {
  std::stringstream in(selector);
  for (std::string term; std::getline(in, term, ',');) {
    term = Trim(term);
    if (term.empty()) continue;
    size_t ne = term.find("!=");
    size_t eq = term.find('=');
    if (ne != std::string::npos) {
      auto v = lookup(Trim(term.substr(0, ne)));
      if (v && *v == Trim(term.substr(ne + 2))) return false;
    } else if (eq != std::string::npos) {
      size_t skip = term.compare(eq, 2, "==") == 0 ? 2 : 1;
      auto v = lookup(Trim(term.substr(0, eq)));
      if (!v || *v != Trim(term.substr(eq + skip))) return false;
    } else if (term[0] == '!') {
      if (lookup(term.substr(1))) return false;
    } else if (!lookup(term)) {
      return false;
    }
  }
  return true;
}

bool Selected(const Json& object, const std::string& labels,
              const std::string& fields) {
  auto label = [&](const std::string& key) -> std::optional<std::string> {
    auto meta = object.find("metadata");
    if (meta == object.end() || !meta->contains("labels")) return std::nullopt;
    const Json& all = meta->at("labels");
    auto it = all.find(key);
    if (it == all.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  return Matches(labels, label) && Matches(fields, [&](const std::string& key) {
           return Field(object, key);
         });
}

void Reply(httplib::Response* res, int code, const Json& body) {
  res->status = code;
  res->set_content(body.dump(), "application/json");
}

// A Status object saying that a request failed.
Json Failure(int code, const std::string& reason, const std::string& message) {
  return {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
          {"reason", reason}, {"message", message}, {"code", code}};
}

// Where `object` lives: /api/v1/... or /apis/GROUP/VERSION/..., its kind's
// plural, its namespace (default for a namespaced kind without one) and
// name; "" if it lacks one of them.
std::string ManifestPath(const Json& object) {
  static const std::set<std::string> cluster_scoped = {
      "Namespace",
      "Node",
      "ClusterRole",
      "ClusterRoleBinding",
      "CustomResourceDefinition",
      "ValidatingAdmissionPolicy",
      "ValidatingAdmissionPolicyBinding",
      "DeviceClass",
      "PersistentVolume",
      "StorageClass",
      "PriorityClass"};
  std::string version = object.value("apiVersion", "");
  std::string kind = object.value("kind", "");
  std::string name = object.contains("metadata")
                         ? object["metadata"].value("name", "")
                         : std::string();
  if (version.empty() || kind.empty() || name.empty()) return "";
  std::string plural;
  for (char c : kind) {
    plural += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  plural = plural.back() == 'y' ? plural.substr(0, plural.size() - 1) + "ies"
                                : plural + "s";
  std::string path = version.find('/') == std::string::npos
                         ? "/api/" + version
                         : "/apis/" + version;
  if (!cluster_scoped.count(kind)) {
    std::string ns = object["metadata"].value("namespace", "default");
    path += "/namespaces/" + ns;
  }
  return path + "/" + plural + "/" + name;
}

void Fail(httplib::Response* res, int code, const std::string& reason,
          const std::string& message) {
  Reply(res, code, Failure(code, reason, message));
}

std::string KindOf(const std::string& resource) {
  static const std::map<std::string, std::string> kinds = {
      {"nodes", "Node"},
      {"pods", "Pod"},
      {"configmaps", "ConfigMap"},
      {"deployments", "Deployment"},
      {"resourceclaims", "ResourceClaim"}};
  auto it = kinds.find(resource);
  return it == kinds.end() ? "Object" : it->second;
}

// The object without what the API server keeps apart from its spec
// (metadata, status): a change there bumps metadata.generation.
Json SpecOf(Json object) {
  object.erase("metadata");
  object.erase("status");
  return object;
}

// Checks `object` against the custom resource's schema as the API server
// does: errors answer 422 Invalid naming each field; unknown fields are
// pruned with a warning, or answer 400 under fieldValidation=Strict.
// Returns true if it answered.
bool RefusedBySchema(const CustomResource& resource, const std::string& name,
                     const httplib::Request& req, Json* object,
                     httplib::Response* res) {
  SchemaFindings found = CheckSchema(resource.schema, object);
  if (!found.errors.empty()) {
    Json causes = Json::array();
    for (const std::string& e : found.errors) {
      causes.push_back({{"field", e.substr(0, e.find(": "))},
                        {"message", e.substr(e.find(": ") + 2)}});
    }
    std::string all = found.errors.size() == 1
                          ? found.errors[0]
                          : fmt::format("[{}]", fmt::join(found.errors, ", "));
    Json status =
        Failure(422, "Invalid",
                fmt::format("{}.{} \"{}\" is invalid: {}", resource.kind,
                            resource.group, name, all));
    status["details"] = {{"name", name},
                         {"group", resource.group},
                         {"kind", resource.kind},
                         {"causes", causes}};
    Reply(res, 422, status);
    return true;
  }
  if (found.unknown.empty()) return false;
  if (req.get_param_value("fieldValidation") == "Strict") {
    std::vector<std::string> quoted;
    for (const std::string& u : found.unknown) {
      quoted.push_back(fmt::format("unknown field \"{}\"", u));
    }
    Fail(res, 400, "BadRequest",
         fmt::format("strict decoding error: {}", fmt::join(quoted, ", ")));
    return true;
  }
  for (const std::string& u : found.unknown) {
    res->set_header("Warning",
                    fmt::format("299 - \"unknown field \\\"{}\\\"\"", u));
  }
  return false;
}

// A built-in kind's body with a top-level field its type does not have:
// under fieldValidation=Strict (kubectl's default) the API server refuses
// it, naming each; otherwise it drops them, as here.
Status StrictFields(const ApiPath& ref, const httplib::Request& req,
                    Json* object) {
  std::vector<std::string> unknown = UnknownTopLevelFields(ref, *object);
  if (unknown.empty()) return Status::Ok();
  if (req.get_param_value("fieldValidation") != "Strict") {
    for (const std::string& u : unknown) object->erase(u);
    return Status::Ok();
  }
  std::vector<std::string> quoted;
  for (const std::string& u : unknown) {
    quoted.push_back(fmt::format("unknown field \"{}\"", u));
  }
  return Status::InvalidArgument(
      fmt::format("strict decoding error: {}", fmt::join(quoted, ", ")));
}

}  // namespace

ApiServerStandIn::ApiServerStandIn(Options options)
    : options_(std::move(options)) {}

ApiServerStandIn::~ApiServerStandIn() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

Status ApiServerStandIn::Start() {
  if (!options_.cert_file.empty()) {
    server_ = std::make_unique<httplib::SSLServer>(options_.cert_file.c_str(),
                                                   options_.key_file.c_str());
  } else {
    server_ = std::make_unique<httplib::Server>();
  }
  if (!server_->is_valid()) {
    return Status::InvalidArgument("stand-in API server: bad certificate");
  }
  // A thread per open connection: each client keeps one, each watch holds
  // one (a 264-GPU test runs 33 agents, each with both).
  server_->new_task_queue = [] { return new httplib::ThreadPool(256); };
  server_->set_tcp_nodelay(true);
  Route();
  thread_ = testing::ListenOnLocalPort(server_.get(), &port_);
  if (port_ <= 0) return Status::Unavailable("stand-in API server: no port");
  return Status::Ok();
}

std::string ApiServerStandIn::url() const {
  return options_.cert_file.empty()
             ? fmt::format("http://127.0.0.1:{}", port_)
             : fmt::format("https://localhost:{}", port_);
}

std::optional<Json> ApiServerStandIn::Get(const std::string& path) const {
  std::lock_guard lock(mu_);
  auto it = objects_.find(path);
  if (it == objects_.end()) return std::nullopt;
  return it->second;
}

Json ApiServerStandIn::Store(const std::string& path, Json object,
                             const std::string& type,
                             std::unique_lock<std::mutex>* lock) {
  long version = ++version_;
  // A deletion's event carries the deletion's version, as Kubernetes's do,
  // so a watch resumed from it does not replay what came before.
  object["metadata"]["resourceVersion"] = std::to_string(version);
  if (type == "DELETED") {
    objects_.erase(path);
  } else {
    if (!object["metadata"].contains("uid")) {
      object["metadata"]["uid"] = fmt::format("uid-{}", version);
    }
    objects_[path] = object;
  }
  Event event{version, type, path, object};
  history_.push_back(event);
  lock->unlock();
  changed_.notify_all();
  Notify(event);
  return object;
}

void ApiServerStandIn::Notify(const Event& event) {
  std::vector<Observer> observers;
  {
    std::lock_guard lock(mu_);
    observers = observers_;
  }
  for (const Observer& o : observers) o(event.type, event.path, event.object);
}

Json ApiServerStandIn::Put(const std::string& path, Json object) {
  std::unique_lock lock(mu_);
  ApiPath ref = ParseApiPath(path);
  object["metadata"]["name"] = ref.name;
  if (!ref.ns.empty()) object["metadata"]["namespace"] = ref.ns;
  // Every object the API server answers says what it is (kubectl's
  // `label` and `apply` refuse one that does not).
  if (ref.ok && !object.contains("apiVersion")) {
    object["apiVersion"] = ref.GroupVersion();
  }
  if (!object.contains("kind")) {
    if (std::string kind = KindAt(objects_, ref); !kind.empty()) {
      object["kind"] = kind;
    }
  }
  std::string type = objects_.count(path) > 0 ? "MODIFIED" : "ADDED";
  return Store(path, std::move(object), type, &lock);
}

bool ApiServerStandIn::Update(const std::string& path,
                              const std::function<void(Json*)>& change) {
  std::unique_lock lock(mu_);
  auto it = objects_.find(path);
  if (it == objects_.end()) return false;
  Json object = it->second;
  change(&object);
  Store(path, std::move(object), "MODIFIED", &lock);
  return true;
}

std::vector<Json> ApiServerStandIn::List(const std::string& collection) const {
  std::vector<Json> items;
  Visit(collection, [&](const Json& object) { items.push_back(object); });
  return items;
}

void ApiServerStandIn::Visit(
    const std::string& collection,
    const std::function<void(const Json&)>& visit) const {
  std::lock_guard lock(mu_);
  ApiPath c = ParseApiPath(collection);
  auto [first, last] = Range(c);
  for (auto it = first; it != last; ++it) {
    if (ParseApiPath(it->first).InCollection(c)) visit(it->second);
  }
}

std::pair<ApiServerStandIn::Objects::const_iterator,
          ApiServerStandIn::Objects::const_iterator>
ApiServerStandIn::Range(const ApiPath& collection) const {
  // A namespace's collection is a range of paths; a cluster-wide one of a
  // namespaced resource is spread over the namespaces.
  if (collection.ns.empty()) return {objects_.begin(), objects_.end()};
  std::string prefix = collection.prefix + "/namespaces/" + collection.ns +
                       "/" + collection.resource + "/";
  std::string past = prefix;
  past.back() = '/' + 1;
  return {objects_.lower_bound(prefix), objects_.lower_bound(past)};
}

void ApiServerStandIn::Expire(
    const std::function<void(std::map<std::string, Json>*)>& quietly) {
  {
    std::lock_guard lock(mu_);
    quietly(&objects_);
    compacted_ = ++version_;
    history_.clear();
    ++expiries_;
  }
  changed_.notify_all();
}

void ApiServerStandIn::AddObserver(Observer observer) {
  std::lock_guard lock(mu_);
  observers_.push_back(std::move(observer));
}

void ApiServerStandIn::FailNext(int count, int code) {
  std::lock_guard lock(mu_);
  fail_count_ = count;
  fail_code_ = code;
}

int ApiServerStandIn::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

int ApiServerStandIn::writes() const {
  std::lock_guard lock(mu_);
  return writes_;
}

int ApiServerStandIn::requests(const std::string& user) const {
  std::lock_guard lock(mu_);
  auto it = user_requests_.find(user);
  return it == user_requests_.end() ? 0 : it->second;
}

std::set<RbacRequest> ApiServerStandIn::Authorized() const {
  std::lock_guard lock(mu_);
  return authorized_;
}

void ApiServerStandIn::ClearAuthorized() {
  std::lock_guard lock(mu_);
  authorized_.clear();
}

Status ApiServerStandIn::ApplyManifests(const std::string& yaml,
                                        const std::string& source,
                                        const std::set<std::string>& kinds) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(yaml);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}: {}", source, e.what()));
  }
  for (const YAML::Node& doc : docs) {
    if (!doc.IsMap()) continue;
    Json object = YamlToJson(doc);
    if (!kinds.empty() && !kinds.count(object.value("kind", ""))) continue;
    std::string path = ManifestPath(object);
    if (path.empty()) {
      return Status::InvalidArgument(fmt::format(
          "{}: an object without apiVersion, kind or metadata.name", source));
    }
    Put(path, object);
  }
  return Status::Ok();
}

Status ApiServerStandIn::ApplyShipped(const std::string& path) {
  MIGSERVE_ASSIGN_OR_RETURN(std::string text,
                            ReadFile(testing::SourcePath(path)));
  return ApplyManifests(text, path);
}

KubeConfig ApiServerStandIn::ClientConfig(const std::string& namespace_,
                                          const std::string& token) const {
  KubeConfig config;
  config.server = url();
  config.namespace_ = namespace_;
  config.token = token;
  config.allow_loopback_http = true;
  return config;
}

std::string ApiServerStandIn::KubeconfigYaml(const std::string& namespace_,
                                             const std::string& token) const {
  std::string text =
      "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n"
      "- name: c\n  context:\n    cluster: c\n";
  if (!token.empty()) text += "    user: u\n";
  if (!namespace_.empty()) text += "    namespace: " + namespace_ + "\n";
  text += "clusters:\n- name: c\n  cluster:\n    server: " + url() + "\n";
  if (!options_.cert_file.empty()) {
    text += "    certificate-authority: " + options_.cert_file + "\n";
  }
  if (!token.empty())
    text += "users:\n- name: u\n  user: {token: " + token + "}\n";
  return text;
}

void ApiServerStandIn::Route() {
  // Admission in each handler, not before routing: by then the request's
  // body has been read, so a refused write leaves nothing on a kept-alive
  // connection for the next request to be parsed from (an empty 400).
  auto admitted = [this](auto handle) {
    return [this, handle](const httplib::Request& req, httplib::Response& res) {
      if (!Admit(req, &res)) handle(req, &res);
    };
  };
  server_->Get(
      ".*", admitted([this](const httplib::Request& req,
                            httplib::Response* res) { HandleGet(req, res); }));
  server_->Post(".*", admitted([this](const httplib::Request& req,
                                      httplib::Response* res) {
                  HandleCreate(req, res);
                }));
  server_->Patch(".*", admitted([this](const httplib::Request& req,
                                       httplib::Response* res) {
                   HandleChange(req, res, true);
                 }));
  server_->Put(".*", admitted([this](const httplib::Request& req,
                                     httplib::Response* res) {
                 HandleChange(req, res, false);
               }));
  server_->Delete(".*", admitted([this](const httplib::Request& req,
                                        httplib::Response* res) {
                    HandleDelete(req, res);
                  }));
}

bool ApiServerStandIn::Admit(const httplib::Request& req,
                             httplib::Response* res) {
  std::lock_guard lock(mu_);
  ++requests_;
  if (req.method != "GET") ++writes_;
  std::string bearer = req.get_header_value("Authorization");
  auto user = bearer.rfind("Bearer ", 0) == 0
                  ? options_.users.find(bearer.substr(7))
                  : options_.users.end();
  if (user != options_.users.end()) {
    ++user_requests_[user->second];
    RbacRequest r = RbacRequestOf(user->second, req.method, req.path,
                                  req.get_param_value("watch"));
    if (!RbacAllows(objects_, r)) {
      Json status = Failure(403, "Forbidden", ForbiddenMessage(r));
      status["details"] = {{"name", r.name}, {"kind", r.resource}};
      Reply(res, 403, status);
      return true;
    }
    r.name.clear();
    authorized_.insert(r);
  } else if ((!options_.token.empty() || !options_.users.empty()) &&
             bearer != "Bearer " + options_.token) {
    Fail(res, 401, "Unauthorized", "Unauthorized");
    return true;
  }
  if (fail_count_ > 0) {
    --fail_count_;
    Fail(res, fail_code_, "Injected", "injected failure");
    return true;
  }
  // The API server also reads protobuf (what kubectl's typed commands,
  // `kubectl create configmap` say, send for built-in kinds); the stand-in
  // reads JSON only, and says so rather than failing the body as bad.
  if (req.get_header_value("Content-Type").find("protobuf") !=
      std::string::npos) {
    Fail(res, 415, "UnsupportedMediaType",
         "the stand-in API server reads JSON bodies only, not "
         "application/vnd.kubernetes.protobuf (kubectl's typed commands send "
         "it: use kubectl apply)");
    return true;
  }
  return false;
}

void ApiServerStandIn::HandleGet(const httplib::Request& req,
                                 httplib::Response* res) {
  ApiPath ref = ParseApiPath(req.path);
  std::optional<CustomResource> custom;
  {
    std::lock_guard lock(mu_);
    if (std::optional<Json> found = Discovery(objects_, req.path)) {
      return Reply(res, 200, *found);
    }
    if (std::optional<Json> found = OpenApiV3(objects_, req.path)) {
      return Reply(res, 200, *found);
    }
    bool defined = false;
    custom = FindCustomResource(objects_, ref, &defined);
    if (defined && !custom) ref.ok = false;
  }
  if (!ref.ok) {
    return Fail(res, 404, "NotFound",
                "the server could not find the requested resource");
  }
  // kubectl get asks for a Table; the printer columns make it.
  bool table = custom && req.get_header_value("Accept").find("as=Table") !=
                             std::string::npos;
  std::string labels = req.get_param_value("labelSelector");
  std::string fields = req.get_param_value("fieldSelector");
  std::string watch = req.get_param_value("watch");
  if (!ref.name.empty()) {
    auto object = Get(ref.ObjectPath());
    if (!object) return Fail(res, 404, "NotFound", req.path + " not found");
    if (table) {
      return Reply(
          res, 200,
          PrinterTable(*custom, {*object},
                       object->at("metadata").value("resourceVersion", "")));
    }
    return Reply(res, 200, *object);
  }
  if (watch == "1" || watch == "true") return Watch(req, res);
  Json items = Json::array();
  long version;
  {
    std::lock_guard lock(mu_);
    version = version_;
    auto [first, last] = Range(ref);
    for (auto it = first; it != last; ++it) {
      if (ParseApiPath(it->first).InCollection(ref) &&
          Selected(it->second, labels, fields)) {
        items.push_back(it->second);
      }
    }
  }
  if (table) {
    return Reply(res, 200,
                 PrinterTable(*custom, items.get<std::vector<Json>>(),
                              std::to_string(version)));
  }
  Reply(res, 200,
        {{"kind", KindOf(ref.resource) + "List"},
         {"apiVersion", ref.prefix.substr(ref.prefix.find('/', 1) + 1)},
         {"metadata", {{"resourceVersion", std::to_string(version)}}},
         {"items", items}});
}

void ApiServerStandIn::Watch(const httplib::Request& req,
                             httplib::Response* res) {
  ApiPath ref = ParseApiPath(req.path);
  std::string labels = req.get_param_value("labelSelector");
  std::string fields = req.get_param_value("fieldSelector");
  std::string from = req.get_param_value("resourceVersion");
  int timeout = options_.max_watch_s;
  if (req.has_param("timeoutSeconds")) {
    timeout =
        std::min(timeout, std::stoi(req.get_param_value("timeoutSeconds")));
  }
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
  auto sent = std::make_shared<long>(-1);
  int expiries;
  {
    std::lock_guard lock(mu_);
    expiries = expiries_;
  }
  res->set_chunked_content_provider(
      "application/json", [this, ref, labels, fields, from, deadline, sent,
                           expiries](size_t, httplib::DataSink& sink) {
        std::unique_lock lock(mu_);
        std::vector<Json> lines;
        if (*sent < 0) {
          if (from.empty() || from == "0") {
            for (const auto& [path, object] : objects_) {
              if (ParseApiPath(path).InCollection(ref) &&
                  Selected(object, labels, fields)) {
                lines.push_back({{"type", "ADDED"}, {"object", object}});
              }
            }
            *sent = version_;
          } else {
            *sent = std::stol(from);
          }
        }
        auto expired = [&] {
          return *sent < compacted_ || expiries_ != expiries;
        };
        auto pending = [&] {
          return stopping_ || expired() ||
                 (!history_.empty() && history_.back().version > *sent);
        };
        if (lines.empty()) changed_.wait_until(lock, deadline, pending);
        if (expired()) {
          lock.unlock();
          std::string text =
              Json{{"type", "ERROR"},
                   {"object",
                    Failure(410, "Expired", "too old resource version")}}
                  .dump() +
              "\n";
          sink.write(text.data(), text.size());
          sink.done();
          return true;
        }
        for (const Event& e : history_) {
          if (e.version <= *sent) continue;
          *sent = e.version;
          if (ParseApiPath(e.path).InCollection(ref) &&
              Selected(e.object, labels, fields)) {
            lines.push_back({{"type", e.type}, {"object", e.object}});
          }
        }
        bool over = stopping_ || std::chrono::steady_clock::now() >= deadline;
        lock.unlock();
        for (const Json& line : lines) {
          std::string text = line.dump() + "\n";
          if (!sink.write(text.data(), text.size())) return false;
        }
        if (over) sink.done();
        return true;
      });
}

void ApiServerStandIn::HandleCreate(const httplib::Request& req,
                                    httplib::Response* res) {
  ApiPath ref = ParseApiPath(req.path);
  Json object = Json::parse(req.body, nullptr, false);
  if (!ref.ok || !ref.name.empty() || !object.is_object()) {
    return Fail(res, 400, "BadRequest", "bad create");
  }
  std::unique_lock lock(mu_);
  std::string name = object["metadata"].value("name", "");
  std::string prefix = object["metadata"].value("generateName", "");
  if (name.empty() && !prefix.empty()) {
    // As the API server does: the prefix and five random characters.
    name = fmt::format("{}{:05x}", prefix, ++generated_ & 0xfffff);
    object["metadata"]["name"] = name;
  }
  if (name.empty()) {
    lock.unlock();
    return Fail(res, 422, "Invalid", "metadata.name: Required value");
  }
  ref.name = name;
  if (objects_.count(ref.ObjectPath()) > 0) {
    lock.unlock();
    return Fail(res, 409, "AlreadyExists",
                fmt::format("{} \"{}\" already exists", ref.resource, name));
  }
  if (Status strict = StrictFields(ref, req, &object); !strict.ok()) {
    lock.unlock();
    return Fail(res, 400, "BadRequest", std::string(strict.message()));
  }
  if (std::string problem = EventNamespaceProblem(ref, object);
      !problem.empty()) {
    lock.unlock();
    return Fail(res, 422, "Invalid",
                fmt::format("Event \"{}\" is invalid: {}", name, problem));
  }
  bool defined = false;
  std::optional<CustomResource> custom =
      FindCustomResource(objects_, ref, &defined);
  if (defined && !custom) {
    lock.unlock();
    return Fail(res, 404, "NotFound",
                "the server could not find the requested resource");
  }
  if (custom) {
    // With a status subresource a create sets no status.
    if (custom->status_subresource) object.erase("status");
    if (RefusedBySchema(*custom, name, req, &object, res)) return;
    object["metadata"]["generation"] = 1;
    object["metadata"]["creationTimestamp"] = TimeNow();
  }
  if (!ref.ns.empty()) object["metadata"]["namespace"] = ref.ns;
  Reply(res, 201, Store(ref.ObjectPath(), object, "ADDED", &lock));
}

void ApiServerStandIn::HandleChange(const httplib::Request& req,
                                    httplib::Response* res, bool patch) {
  ApiPath ref = ParseApiPath(req.path);
  Json body = Json::parse(req.body, nullptr, false);
  const std::string type = req.get_header_value("Content-Type");
  // A JSON patch (RFC 6902) is a list of operations, applied all or none;
  // a merge patch or a replacement is an object.
  const bool json_patch = patch && type == "application/json-patch+json";
  if (!ref.ok || ref.name.empty() ||
      !(json_patch ? body.is_array() : body.is_object())) {
    return Fail(res, 400, "BadRequest", "bad request");
  }
  const bool strategic =
      patch && type == "application/strategic-merge-patch+json";
  if (patch && !json_patch && !strategic &&
      type != "application/merge-patch+json") {
    return Fail(res, 415, "UnsupportedMediaType",
                "only application/merge-patch+json, "
                "application/strategic-merge-patch+json or "
                "application/json-patch+json");
  }
  std::unique_lock lock(mu_);
  auto it = objects_.find(ref.ObjectPath());
  if (it == objects_.end()) {
    lock.unlock();
    return Fail(res, 404, "NotFound", req.path + " not found");
  }
  // Read without operator[], which would add "metadata": null to the
  // body, and a merge patch would then delete the object's metadata.
  auto meta = json_patch ? body.end() : body.find("metadata");
  std::string want = !json_patch && meta != body.end() && meta->is_object()
                         ? meta->value("resourceVersion", "")
                         : "";
  if (!want.empty() &&
      want != it->second["metadata"]["resourceVersion"].get<std::string>()) {
    lock.unlock();
    return Fail(res, 409, "Conflict",
                "the object has been modified; please apply your changes "
                "to the latest version and try again");
  }
  const Json& before = it->second;
  Json object = before;
  if (json_patch) {
    // As the API server answers a patch that does not apply (a failed
    // `test` included): 422, nothing changed.
    try {
      object = before.patch(body);
    } catch (const nlohmann::json::exception& e) {
      lock.unlock();
      return Fail(res, 422, "Invalid", e.what());
    }
  } else if (strategic) {
    // Built-in kinds only: custom resources have no merge keys, and the
    // API server refuses the patch for them.
    bool defined = false;
    if (FindCustomResource(objects_, ref, &defined) || defined) {
      lock.unlock();
      return Fail(res, 415, "UnsupportedMediaType",
                  "the body of the request was in an unknown format - "
                  "accepted media types include: "
                  "application/json-patch+json, "
                  "application/merge-patch+json, application/apply-patch+yaml");
    }
    StatusOr<Json> merged = StrategicMergePatch(before, body);
    if (!merged.ok()) {
      lock.unlock();
      return Fail(res, 400, "BadRequest",
                  std::string(merged.status().message()));
    }
    object = *std::move(merged);
  } else if (patch) {
    object.merge_patch(body);
  } else {
    if (Status strict = StrictFields(ref, req, &body); !strict.ok()) {
      lock.unlock();
      return Fail(res, 400, "BadRequest", std::string(strict.message()));
    }
    object = body;
  }
  object["metadata"]["name"] = ref.name;
  bool defined = false;
  std::optional<CustomResource> custom =
      FindCustomResource(objects_, ref, &defined);
  if (custom) {
    if (!ChangeCustom(*custom, ref, req, before, &object, res)) return;
  } else if (defined) {
    lock.unlock();
    return Fail(res, 404, "NotFound",
                "the server could not find the requested resource");
  }
  Reply(res, 200, Store(ref.ObjectPath(), object, "MODIFIED", &lock));
}

void ApiServerStandIn::HandleDelete(const httplib::Request& req,
                                    httplib::Response* res) {
  ApiPath ref = ParseApiPath(req.path);
  std::unique_lock lock(mu_);
  auto it = objects_.find(ref.ObjectPath());
  if (!ref.ok || it == objects_.end()) {
    lock.unlock();
    return Fail(res, 404, "NotFound", req.path + " not found");
  }
  Json object = it->second;
  // DeleteOptions' preconditions: the object must still be that one.
  Json options = Json::parse(req.body, nullptr, false);
  if (options.is_object() && options.contains("preconditions")) {
    const Json& want = options["preconditions"];
    const Json& meta = object["metadata"];
    for (const char* key : {"uid", "resourceVersion"}) {
      if (want.contains(key) && want[key] != meta.value(key, Json())) {
        lock.unlock();
        return Fail(res, 409, "Conflict",
                    fmt::format("Precondition failed: {} in "
                                "precondition: {}, {} in object: {}",
                                key, want[key].dump(), key,
                                meta.value(key, Json()).dump()));
      }
    }
  }
  // What goes with it, as the API server's controllers delete it: a
  // namespace's objects, and a definition's custom resources. (The real
  // ones go after the answer, the namespace Terminating meanwhile; here
  // before it.)
  std::vector<std::string> with;
  const bool is_namespace =
      ref.prefix == "/api/v1" && ref.resource == "namespaces";
  const bool is_definition = ref.prefix == "/apis/apiextensions.k8s.io/v1" &&
                             ref.resource == "customresourcedefinitions";
  const Json spec = object.value("spec", Json::object());
  const std::string group = spec.value("group", "");
  const std::string plural =
      spec.value("names", Json::object()).value("plural", "");
  for (const auto& [path, stored] : objects_) {
    ApiPath other = ParseApiPath(path);
    if ((is_namespace && other.ns == ref.name) ||
        (is_definition && other.Group() == group && other.resource == plural)) {
      with.push_back(path);
    }
  }
  for (const std::string& path : with) {
    if (!lock.owns_lock()) lock.lock();
    auto gone = objects_.find(path);
    if (gone != objects_.end()) Store(path, gone->second, "DELETED", &lock);
  }
  if (!lock.owns_lock()) lock.lock();
  Store(ref.ObjectPath(), object, "DELETED", &lock);
  Reply(res, 200, {{"kind", "Status"}, {"status", "Success"}});
}

bool ApiServerStandIn::ChangeCustom(const CustomResource& resource,
                                    const ApiPath& ref,
                                    const httplib::Request& req,
                                    const Json& before, Json* object,
                                    httplib::Response* res) {
  if (!ref.sub.empty() &&
      (ref.sub != "status" || !resource.status_subresource)) {
    Fail(res, 404, "NotFound",
         "the server could not find the requested resource");
    return false;
  }
  Json next = before;
  if (ref.sub == "status") {
    // Through /status only the status changes.
    if (object->contains("status")) {
      next["status"] = (*object)["status"];
    } else {
      next.erase("status");
    }
  } else {
    // A write of the object keeps the metadata the API server owns and,
    // with a status subresource, the status.
    next = *object;
    for (const char* key : {"uid", "creationTimestamp", "generation"}) {
      if (before["metadata"].contains(key)) {
        next["metadata"][key] = before["metadata"][key];
      }
    }
    if (resource.status_subresource) {
      if (before.contains("status")) {
        next["status"] = before["status"];
      } else {
        next.erase("status");
      }
    }
  }
  if (RefusedBySchema(resource, ref.name, req, &next, res)) return false;
  if (SpecOf(next) != SpecOf(before)) {
    next["metadata"]["generation"] =
        before["metadata"].value("generation", 0) + 1;
  }
  *object = std::move(next);
  return true;
}

}  // namespace migserve::kube
