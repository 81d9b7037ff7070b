#include "manager/health_server.h"

#include <fmt/format.h>
#include <httplib.h>

namespace migserve::manager {

HealthServer::HealthServer(const controller::Reconciler* reconciler)
    : reconciler_(reconciler), server_(std::make_unique<httplib::Server>()) {
  server_->Get(
      "/metrics", [this](const httplib::Request&, httplib::Response& res) {
        res.set_content(reconciler_->Metrics(), "text/plain; version=0.0.4");
      });
  server_->Get("/progress", [this](const httplib::Request&,
                                   httplib::Response& res) {
    res.set_content(reconciler_->Progress().dump(2) + "\n", "application/json");
  });
  server_->Get("/healthz",
               [this](const httplib::Request&, httplib::Response& res) {
                 Status health = reconciler_->Health();
                 res.status = health.ok() ? 200 : 503;
                 res.set_content(health.ok() ? "ok\n" : health.message() + "\n",
                                 "text/plain");
               });
}

HealthServer::~HealthServer() {
  if (thread_.joinable()) {
    server_->stop();
    thread_.join();
  }
}

Status HealthServer::Start(const std::string& address, int port) {
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

}  // namespace migserve::manager
