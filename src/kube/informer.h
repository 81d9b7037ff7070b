// A watch-fed cache of one collection of Kubernetes objects (client-go's
// informer, reduced to what the backend needs): it lists the collection
// once, then watches it from the list's resourceVersion on a thread of its
// own and applies each ADDED, MODIFIED and DELETED event to the cache. When
// the server answers that the version is too old (an ERROR event or HTTP
// 410 Gone: its history was compacted) or the watch fails, it lists again.
// So a controller that looks at the cluster after every action sends one
// request per watch period instead of a listing per look.
//
// A consumer that keeps books of its own (the Kubernetes backend's live
// view) takes the names that changed since its last take, each with its
// object now (none: gone), and so costs per change, not per object.
//
// The thread starts at the second look: a command that looks once (observe,
// a dry run) sends one listing and leaves no watch behind. A cache that is
// not watched is not trusted: the second look lists again.
#ifndef MIGSERVE_KUBE_INFORMER_H_
#define MIGSERVE_KUBE_INFORMER_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "kube/kube_client.h"
#include "util/mutex.h"
#include "util/status_or.h"

namespace migserve::kube {

class Informer {
 public:
  using Objects = std::map<std::string, nlohmann::json>;  // by name

  // Caches the collection `path` selected by `query` (for example
  // "labelSelector=a%3Db"). `client` is not owned and outlives the
  // informer. A watch asks the server to end it after `watch_s` seconds;
  // then it resumes from the last version seen. `on_change` (may be empty)
  // is called on the informer's thread after every change to the cache.
  Informer(KubeClient* client, std::string path, std::string query,
           int watch_s = 300, std::function<void()> on_change = {});
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Per name, the object now, or none where it is gone.
  using Changes = std::map<std::string, std::optional<nlohmann::json>>;

  // The collection as last seen. The first two calls list it (the second
  // starts the watch); later ones answer from the cache, or with the error
  // of the last listing if it failed (the watch keeps trying), or of a
  // watch the server refused (401, 403) until one works.
  StatusOr<Objects> Get();
  // As Get, without the copy: lists where Get would, else returns the
  // error of the last listing, if it failed.
  Status Look();
  // The objects that changed (were added, modified or deleted, by the watch
  // or by a listing) since the last call, each as it is now; the first call
  // returns every object (changes are kept only once a consumer takes
  // them).
  Changes TakeChanges();

  // Object `name` as cached (no request; nothing before the first look).
  std::optional<nlohmann::json> Find(const std::string& name) const;

  // Listings sent so far (the first ones and every relist).
  int lists() const;

 private:
  // Lists the collection into the cache; keeps the error for Get if it
  // fails.
  Status List();
  // The watching thread: watch, apply, list again when told the version is
  // gone or the watch failed, until stop_.
  void Run();
  // Applies one watch event; false when the watch must end and the
  // collection be listed again.
  bool Apply(const nlohmann::json& event);

  KubeClient* client_;
  const std::string path_;
  const std::string query_;
  const int watch_s_;
  const std::function<void()> on_change_;

  mutable Mutex mu_;
  std::condition_variable stopping_;
  Objects objects_ GUARDED_BY(mu_);
  bool tracking_ GUARDED_BY(mu_) = false;  // TakeChanges has been called
  // Names, since the last TakeChanges.
  std::set<std::string> changed_ GUARDED_BY(mu_);
  std::string version_ GUARDED_BY(mu_);  // resourceVersion to watch from
  // Of the last listing, or of a watch refused for want of permission.
  Status error_ GUARDED_BY(mu_);
  int lists_ GUARDED_BY(mu_) = 0;
  bool watching_ GUARDED_BY(mu_) = false;
  std::atomic<bool> stop_ = false;
  std::thread thread_;  // started once, with mu_ held
};

}  // namespace migserve::kube

#endif  // MIGSERVE_KUBE_INFORMER_H_
