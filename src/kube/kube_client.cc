#include "kube/kube_client.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "boundary/input_file.h"
#include "util/mutex.h"

namespace migserve::kube {

// Outside the anonymous namespace: KubeClient::Connection holds a CurlPtr.
struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using CurlPtr = std::unique_ptr<CURL, CurlDeleter>;
using SlistPtr = std::unique_ptr<curl_slist, SlistDeleter>;

namespace {

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// An answer's body, bounded like every other input (MaxInputBytes: a
// 300 MB object was read on, issue 92).
struct BodySink {
  std::string text;
  size_t limit = 0;
  bool too_large = false;
};

size_t AppendBody(char* data, size_t size, size_t n, void* out) {
  auto* body = static_cast<BodySink*>(out);
  if (body->text.size() + size * n > body->limit) {
    body->too_large = true;
    return 0;  // ends the transfer (CURLE_WRITE_ERROR)
  }
  body->text.append(data, size * n);
  return size * n;
}

// The most bytes of one answer, or of one line of a watch.
StatusOr<size_t> BodyLimit() {
  MIGSERVE_ASSIGN_OR_RETURN(long long limit, MaxInputBytes());
  return static_cast<size_t>(limit);
}

// Sets up `c` for `url` with verification on, the config's CA,
// `credential`'s client certificate, and `headers` (which get its bearer
// token).
void Prepare(CURL* c, const KubeConfig& config, const Credential& credential,
             const std::string& url, SlistPtr* headers) {
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
  if (!config.ca_pem.empty()) {
    curl_blob blob{const_cast<char*>(config.ca_pem.data()),
                   config.ca_pem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
  }
  if (!credential.cert_pem.empty()) {
    curl_blob cert{const_cast<char*>(credential.cert_pem.data()),
                   credential.cert_pem.size(), CURL_BLOB_COPY};
    curl_blob key{const_cast<char*>(credential.key_pem.data()),
                  credential.key_pem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &cert);
    curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &key);
  }
  curl_slist* list = curl_slist_append(nullptr, "Accept: application/json");
  if (!credential.token.empty()) {
    list = curl_slist_append(
        list, ("Authorization: Bearer " + credential.token).c_str());
  }
  headers->reset(list);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
}

CurlPtr NewHandle() {
  GlobalInit();
  return CurlPtr(curl_easy_init());
}

bool Transient(long code) {
  return code == 429 || code == 500 || code == 502 || code == 503 ||
         code == 504;
}

// The message of a Kubernetes Status body, or the body itself, shortened.
std::string Reason(const std::string& body) {
  auto json = nlohmann::json::parse(body, nullptr, false);
  if (json.is_object() && json.contains("message") &&
      json["message"].is_string()) {
    return json["message"].get<std::string>();
  }
  return body.substr(0, 200);
}

constexpr char kJsonPatch[] = "application/json-patch+json";

// The Status of answer `code` to `what`; a JSON patch's 422 (a failed
// `test`) is a conflict.
Status FromCode(long code, const std::string& what, const std::string& body,
                const std::string& content_type = "") {
  std::string message =
      fmt::format("{}: HTTP {}: {}", what, code, Reason(body));
  if (code == 404) return Status::NotFound(message);
  if (code == 409) return Status::Aborted(message);
  if (code == 422 && content_type == kJsonPatch) {
    return Status::Aborted(message);
  }
  if (code == 401 || code == 403) return Status::FailedPrecondition(message);
  if (code >= 400 && code < 500 && code != 429) {
    return Status::InvalidArgument(message);
  }
  return Status::Unavailable(message);
}

struct WatchState {
  std::string buffer;
  size_t limit = 0;  // the longest line taken (BodyLimit)
  const std::function<bool(const nlohmann::json&)>* on_event = nullptr;
  const std::atomic<bool>* stop = nullptr;
  bool stopped = false;
  Status error;
};

size_t WatchBody(char* data, size_t size, size_t n, void* user) {
  auto* state = static_cast<WatchState*>(user);
  if (state->buffer.size() + size * n > state->limit) {
    state->error = Status::Unavailable(fmt::format(
        "watch: an event is larger than {} MiB, the most migserve reads of "
        "one input (MIGSERVE_MAX_INPUT_MB raises it)",
        state->limit >> 20));
    return 0;
  }
  state->buffer.append(data, size * n);
  size_t end;
  while ((end = state->buffer.find('\n')) != std::string::npos) {
    std::string line = state->buffer.substr(0, end);
    state->buffer.erase(0, end + 1);
    if (line.empty()) continue;
    auto event = nlohmann::json::parse(line, nullptr, false);
    if (event.is_discarded()) {
      state->error = Status::Unavailable("watch: a line is not JSON");
      return 0;
    }
    if (!(*state->on_event)(event)) {
      state->stopped = true;
      return 0;
    }
  }
  return size * n;
}

int WatchProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* state = static_cast<WatchState*>(user);
  if (state->stop != nullptr && state->stop->load()) {
    state->stopped = true;
    return 1;
  }
  return 0;
}

}  // namespace

struct KubeClient::Connection {
  Mutex mu;
  CurlPtr handle GUARDED_BY(mu) = NewHandle();
  std::atomic<long> requests = 0;
  std::atomic<long> writes = 0;
};

KubeClient::KubeClient(KubeConfig config, RetryPolicy retry)
    : config_(std::move(config)),
      retry_(retry),
      transport_(CheckTransport(config_)),
      connection_(std::make_unique<Connection>()) {}

KubeClient::~KubeClient() = default;
KubeClient::KubeClient(KubeClient&&) noexcept = default;

long KubeClient::requests() const { return connection_->requests; }
long KubeClient::writes() const { return connection_->writes; }

std::string KubeClient::Escape(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

StatusOr<Credential> KubeClient::CurrentCredential() const {
  if (!config_.exec) {
    return Credential{config_.token, config_.cert_pem, config_.key_pem, {}};
  }
  return config_.exec->Current();
}

StatusOr<KubeClient::Response> KubeClient::Once(const std::string& method,
                                                const std::string& url,
                                                const std::string& body,
                                                const std::string& content_type,
                                                const Credential& credential) {
  MutexLock lock(&connection_->mu);
  ++connection_->requests;
  if (method != "GET") ++connection_->writes;
  CURL* c = connection_->handle.get();
  curl_easy_reset(c);
  SlistPtr headers;
  Prepare(c, config_, credential, url, &headers);
  if (!content_type.empty()) {
    headers.reset(curl_slist_append(headers.release(),
                                    ("Content-Type: " + content_type).c_str()));
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  }
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (!body.empty()) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(retry_.timeout_s * 1000));
  MIGSERVE_ASSIGN_OR_RETURN(size_t limit, BodyLimit());
  BodySink answer{"", limit, false};
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &answer);
  CURLcode rc = curl_easy_perform(c);
  if (answer.too_large) {
    return Status::InvalidArgument(fmt::format(
        "the answer is larger than {} MiB, the most migserve reads of one "
        "input (MIGSERVE_MAX_INPUT_MB raises it)",
        limit >> 20));
  }
  if (rc != CURLE_OK) {
    return Status::Unavailable(curl_easy_strerror(rc));
  }
  Response response;
  response.body = std::move(answer.text);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.code);
  return response;
}

StatusOr<nlohmann::json> KubeClient::Call(const std::string& method,
                                          const std::string& path,
                                          const std::string& body,
                                          const std::string& content_type) {
  std::string what = method + " " + path;
  if (!transport_.ok()) return transport_.WithPrefix(what);
  StatusOr<Credential> credential = CurrentCredential();
  if (!credential.ok()) return credential.status().WithPrefix(what);
  double backoff = retry_.first_backoff_s;
  Status last;
  bool refreshed = false;  // the plugin's credential, after a 401
  for (int attempt = 1; attempt <= retry_.attempts; ++attempt) {
    if (attempt > 1) {
      std::this_thread::sleep_for(std::chrono::duration<double>(backoff));
      backoff *= 2;
    }
    if (fence_ && method != "GET") {
      if (Status fenced = fence_(); !fenced.ok()) {
        return fenced.WithPrefix(what);
      }
    }
    auto response =
        Once(method, config_.server + path, body, content_type, *credential);
    // A plugin's credential refused: run it again, once, and send again at
    // once, as client-go does.
    if (response.ok() && response->code == 401 && config_.exec && !refreshed) {
      refreshed = true;
      credential = config_.exec->Refresh(*credential);
      if (!credential.ok()) return credential.status().WithPrefix(what);
      response =
          Once(method, config_.server + path, body, content_type, *credential);
    }
    if (!response.ok()) {
      // A transport error is tried again; an answer too large is not.
      if (response.status().code() != Status::Code::kUnavailable) {
        return response.status().WithPrefix(what);
      }
      last = response.status().WithPrefix(what);
      continue;
    }
    if (Transient(response->code)) {
      last = FromCode(response->code, what, response->body);
      continue;
    }
    if (response->code >= 300) {
      return FromCode(response->code, what, response->body, content_type);
    }
    auto json = nlohmann::json::parse(response->body, nullptr, false);
    if (json.is_discarded()) {
      return Status::Unavailable(what + ": the answer is not JSON");
    }
    return json;
  }
  return Status::Unavailable(
      fmt::format("API server {}: {} (after {} attempts)", config_.server,
                  last.message(), retry_.attempts));
}

StatusOr<nlohmann::json> KubeClient::Get(const std::string& path) {
  return Call("GET", path, "", "");
}

StatusOr<nlohmann::json> KubeClient::List(const std::string& path,
                                          const std::string& query) {
  return Call("GET", query.empty() ? path : path + "?" + query, "", "");
}

StatusOr<nlohmann::json> KubeClient::Create(const std::string& path,
                                            const nlohmann::json& object) {
  return Call("POST", path, object.dump(), "application/json");
}

StatusOr<nlohmann::json> KubeClient::Patch(const std::string& path,
                                           const nlohmann::json& patch) {
  return Call("PATCH", path, patch.dump(), "application/merge-patch+json");
}

StatusOr<nlohmann::json> KubeClient::JsonPatch(
    const std::string& path, const nlohmann::json& operations) {
  return Call("PATCH", path, operations.dump(), kJsonPatch);
}

Status KubeClient::Delete(const std::string& path,
                          const nlohmann::json& options) {
  auto deleted = options.is_null()
                     ? Call("DELETE", path, "", "")
                     : Call("DELETE", path, options.dump(), "application/json");
  return deleted.status();
}

Status KubeClient::Watch(
    const std::string& path, const std::string& query,
    const std::string& resource_version, int timeout_s,
    const std::function<bool(const nlohmann::json&)>& on_event,
    const std::atomic<bool>* stop) {
  if (!transport_.ok()) return transport_.WithPrefix("watch " + path);
  std::string url = fmt::format(
      "{}{}?watch=1&allowWatchBookmarks=false&resourceVersion={}"
      "&timeoutSeconds={}{}{}",
      config_.server, path, Escape(resource_version), timeout_s,
      query.empty() ? "" : "&", query);
  StatusOr<Credential> credential = CurrentCredential();
  if (!credential.ok()) return credential.status().WithPrefix("watch " + path);
  SlistPtr headers;
  CurlPtr curl = NewHandle();
  CURL* c = curl.get();
  Prepare(c, config_, *credential, url, &headers);
  WatchState state;
  MIGSERVE_ASSIGN_OR_RETURN(state.limit, BodyLimit());
  state.on_event = &on_event;
  state.stop = stop;
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, WatchBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &state);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, WatchProgress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &state);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, static_cast<long>(timeout_s + 5));
  ++connection_->requests;
  CURLcode rc = curl_easy_perform(c);
  std::string what = "watch " + path;
  if (state.stopped) return Status::Ok();
  if (!state.error.ok()) return state.error.WithPrefix(what);
  if (rc == CURLE_OPERATION_TIMEDOUT) return Status::Ok();
  if (rc != CURLE_OK) {
    return Status::Unavailable(fmt::format(
        "API server {}: {}: {}", config_.server, what, curl_easy_strerror(rc)));
  }
  long code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  // The next watch asks the plugin for a fresh credential.
  if (code == 401 && config_.exec) {
    (void)config_.exec->Refresh(*credential);
  }
  if (code >= 300) return FromCode(code, what, state.buffer);
  return Status::Ok();
}

}  // namespace migserve::kube
