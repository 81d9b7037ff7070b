#include "proxy/testing/emulated_openai_replica.h"

#include <httplib.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "util/testing/http_listener.h"

namespace migserve::proxy {
namespace {

// One chunk of a streamed answer, as an OpenAI server sends it.
std::string Chunk(const std::string& replica, const std::string& model,
                  int token) {
  nlohmann::json chunk = {
      {"object", "chat.completion.chunk"},
      {"model", model},
      {"replica", replica},
      {"choices",
       {{{"index", 0}, {"delta", {{"content", std::to_string(token)}}}}}}};
  return "data: " + chunk.dump() + "\n\n";
}

}  // namespace

EmulatedOpenAiReplica::EmulatedOpenAiReplica(EmulatedOpenAiOptions options)
    : options_(std::move(options)),
      server_(std::make_unique<httplib::Server>()) {
  server_->new_task_queue = [] { return new httplib::ThreadPool(32); };
  server_->set_tcp_nodelay(true);
  server_->Get("/health", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("", "text/plain");
  });
  auto answer = [this](const httplib::Request& req, httplib::Response& res) {
    ++hits_;
    nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
    std::string model =
        body.is_object() && body.contains("model") && body["model"].is_string()
            ? body["model"].get<std::string>()
            : "";
    if (req.get_header_value("migserve-service") != options_.service &&
        model != options_.service && model != options_.model) {
      ++misrouted_;
    }
    const bool stream = body.is_object() && body.value("stream", false);
    auto pause = [this] {
      if (options_.token_ms > 0) {
        std::this_thread::sleep_for(
            std::chrono::duration<double, std::milli>(options_.token_ms));
      }
    };
    if (!stream) {
      ++in_flight_;
      for (int t = 0; t < options_.tokens; ++t) pause();
      --in_flight_;
      res.set_content(nlohmann::json({{"object", "chat.completion"},
                                      {"model", model},
                                      {"replica", options_.name}})
                              .dump() +
                          "\n",
                      "application/json");
      return;
    }
    ++in_flight_;
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, model, pause](size_t, httplib::DataSink& sink) {
          for (int t = 0; t < options_.tokens; ++t) {
            std::string chunk = Chunk(options_.name, model, t);
            if (!sink.write(chunk.data(), chunk.size())) break;
            pause();
          }
          std::string done = "data: [DONE]\n\n";
          sink.write(done.data(), done.size());
          sink.done();
          return true;
        },
        [this](bool) { --in_flight_; });
  };
  server_->Post("/v1/chat/completions", answer);
  server_->Post("/v1/completions", answer);
  listener_ = testing::ListenOnLocalPort(server_.get(), &port_);
}

EmulatedOpenAiReplica::~EmulatedOpenAiReplica() {
  server_->stop();
  listener_.join();
}

}  // namespace migserve::proxy
