#include "kube/informer.h"

#include "boundary/json_fields.h"

namespace migserve::kube {

Informer::Informer(KubeClient* client, std::string path, std::string query,
                   int watch_s, std::function<void()> on_change)
    : client_(client),
      path_(std::move(path)),
      query_(std::move(query)),
      watch_s_(watch_s),
      on_change_(std::move(on_change)) {}

Informer::~Informer() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  stopping_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::optional<nlohmann::json> Informer::Find(const std::string& name) const {
  MutexLock lock(&mu_);
  auto it = objects_.find(name);
  if (it == objects_.end()) return std::nullopt;
  return it->second;
}

int Informer::lists() const {
  MutexLock lock(&mu_);
  return lists_;
}

Status Informer::List() {
  auto list = client_->List(path_, query_);
  {
    MutexLock lock(&mu_);
    ++lists_;
    if (!list.ok()) {
      error_ = list.status();
      return error_;
    }
    if (tracking_) {
      for (const auto& [name, object] : objects_) changed_.insert(name);
    }
    objects_.clear();
    auto items = list->find("items");
    if (items != list->end() && items->is_array()) {
      for (const nlohmann::json& item : *items) {
        std::optional<std::string> name = StringField(item, "metadata", "name");
        if (!name) continue;
        objects_[*name] = item;
        if (tracking_) changed_.insert(*name);
      }
    }
    version_ = StringField(*list, "metadata", "resourceVersion").value_or("");
    error_ = Status::Ok();
  }
  if (on_change_) on_change_();
  return Status::Ok();
}

StatusOr<Informer::Objects> Informer::Get() {
  MIGSERVE_RETURN_IF_ERROR(Look());
  MutexLock lock(&mu_);
  return objects_;
}

Informer::Changes Informer::TakeChanges() {
  MutexLock lock(&mu_);
  Changes changes;
  if (!tracking_) {
    tracking_ = true;
    for (const auto& [name, object] : objects_) changes.emplace(name, object);
    return changes;
  }
  for (const std::string& name : changed_) {
    auto it = objects_.find(name);
    changes.emplace(name, it == objects_.end()
                              ? std::nullopt
                              : std::optional<nlohmann::json>(it->second));
  }
  changed_.clear();
  return changes;
}

Status Informer::Look() {
  MutexLock lock(&mu_);
  if (!watching_) {
    bool second = lists_ > 0 && error_.ok();
    lock.Unlock();
    MIGSERVE_RETURN_IF_ERROR(List());
    lock.Lock();
    if (second && !watching_) {
      watching_ = true;
      thread_ = std::thread([this] { Run(); });
    }
  }
  return error_;
}

bool Informer::Apply(const nlohmann::json& event) {
  std::string type = StringAt(event, "type").value_or("");
  auto object = event.find("object");
  if (type == "ERROR" || object == event.end() || !object->is_object()) {
    return false;  // 410 Expired, or anything the cache cannot follow
  }
  std::optional<std::string> version =
      StringField(*object, "metadata", "resourceVersion");
  std::optional<std::string> name = StringField(*object, "metadata", "name");
  {
    MutexLock lock(&mu_);
    error_ = Status::Ok();  // a watch that delivers works
    if (version) version_ = *version;
    if (type == "BOOKMARK" || !name) return true;
    if (tracking_) changed_.insert(*name);
    if (type == "DELETED") {
      objects_.erase(*name);
    } else {
      objects_[*name] = *object;
    }
  }
  if (on_change_) on_change_();
  return true;
}

void Informer::Run() {
  while (!stop_) {
    std::string from;
    {
      MutexLock lock(&mu_);
      from = version_;
    }
    bool gone = false;
    Status watched = client_->Watch(
        path_, query_, from, watch_s_,
        [&](const nlohmann::json& event) {
          gone = !Apply(event);
          return !gone;
        },
        &stop_);
    if (stop_) return;
    if (watched.ok() && !gone) continue;  // ended by the server: resume
    if (watched.code() == Status::Code::kFailedPrecondition) {
      // Not allowed to watch (401/403): listing instead would hide that
      // and poll the API server without pause. Say so to every Look, and
      // try the watch again in a second.
      MutexLock lock(&mu_);
      error_ = watched;
      auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      while (!stop_ && lock.WaitUntil(&stopping_, until)) {
      }
      continue;
    }
    // The version is gone or the watch failed: list until it works.
    while (!List().ok()) {
      MutexLock lock(&mu_);
      auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      while (!stop_ && lock.WaitUntil(&stopping_, until)) {
      }
      if (stop_) return;
    }
  }
}

}  // namespace migserve::kube
