#include "util/status_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <utility>

namespace migserve {

StatusServer::StatusServer() : server_(std::make_unique<httplib::Server>()) {}

StatusServer::~StatusServer() {
  if (thread_.joinable()) {
    server_->stop();
    thread_.join();
  }
}

void StatusServer::Page(const std::string& path,
                        const std::string& content_type,
                        std::function<std::string()> body) {
  server_->Get(path, [content_type, body = std::move(body)](
                         const httplib::Request&, httplib::Response& res) {
    res.set_content(body(), content_type);
  });
}

void StatusServer::Health(std::function<Status()> health) {
  server_->Get("/healthz",
               [health = std::move(health)](const httplib::Request&,
                                            httplib::Response& res) {
                 Status status = health();
                 res.status = status.ok() ? 200 : 503;
                 res.set_content(status.ok() ? "ok\n" : status.message() + "\n",
                                 "text/plain");
               });
}

Status StatusServer::Start(const std::string& address, int port) {
  port_ = port == 0
              ? server_->bind_to_any_port(address.c_str())
              : (server_->bind_to_port(address.c_str(), port) ? port : -1);
  if (port_ <= 0) {
    return Status::Unavailable(
        fmt::format("cannot listen on {}:{}", address, port));
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return Status::Ok();
}

}  // namespace migserve
