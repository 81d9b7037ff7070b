#include "proxy/testing/emulated_openai_replica.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
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

// The words of a request body's prompt: its messages' contents, or its
// prompt; at least one.
long PromptWords(const nlohmann::json& body) {
  std::string text;
  if (body.is_object() && body.contains("messages") &&
      body["messages"].is_array()) {
    for (const nlohmann::json& m : body["messages"]) {
      if (m.is_object() && m.contains("content") && m["content"].is_string()) {
        text += " " + m["content"].get<std::string>();
      }
    }
  } else if (body.is_object() && body.contains("prompt") &&
             body["prompt"].is_string()) {
    text = body["prompt"].get<std::string>();
  }
  long words = 0;
  bool in_word = false;
  for (char c : text) {
    bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return std::max(1L, words);
}

}  // namespace

void EmulatedOpenAiReplica::Step() {
  using Clock = std::chrono::steady_clock;
  Clock::time_point due = Clock::now();
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (batcher_->Idle()) {
      work_.wait(lock);
      due = Clock::now();
      continue;
    }
    llm::ContinuousBatcher::Step step = batcher_->Next();
    // Steps back to back on a schedule, so the loop's own time does not
    // add up.
    due += std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double, std::milli>(step.ms *
                                                  options_.time_scale));
    lock.unlock();
    std::this_thread::sleep_until(due);
    lock.lock();
    if (Clock::now() > due) due = Clock::now();
    for (size_t id : step.tokens) ++shown_[id];
    tokens_.notify_all();
  }
}

std::optional<size_t> EmulatedOpenAiReplica::Admit(long prompt, long output) {
  std::lock_guard lock(mu_);
  if (!batcher_->Fits({prompt, output})) return std::nullopt;
  size_t id = batcher_->Add({prompt, output});
  shown_.push_back(0);
  work_.notify_one();
  return id;
}

long EmulatedOpenAiReplica::WaitForTokens(size_t id, long shown) {
  std::unique_lock lock(mu_);
  tokens_.wait(lock, [&] { return stopping_ || shown_[id] > shown; });
  return shown_[id];
}

EmulatedOpenAiReplica::EmulatedOpenAiReplica(EmulatedOpenAiOptions options)
    : options_(std::move(options)),
      server_(std::make_unique<httplib::Server>()) {
  if (options_.slice) {
    batcher_ = std::make_unique<llm::ContinuousBatcher>(*options_.slice);
    stepper_ = std::thread([this] { Step(); });
  }
  server_->new_task_queue = [] { return new httplib::ThreadPool(256); };
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
    long output = options_.tokens;
    if (body.is_object() && body.contains("max_tokens") &&
        body["max_tokens"].is_number_integer()) {
      output = std::max(1L, body["max_tokens"].get<long>());
    }
    // The batcher's request, or the fixed pace's.
    std::optional<size_t> id;
    if (batcher_) {
      id = Admit(PromptWords(body), output);
      if (!id) {
        res.status = 400;
        res.set_content(
            R"({"error": {"message": "too long for the KV cache"}})",
            "application/json");
        return;
      }
    }
    // Waits for token `t` (0-based) to be made.
    auto await = [this, id](long t) {
      if (id) {
        WaitForTokens(*id, t);
      } else if (options_.token_ms > 0 && t > 0) {
        std::this_thread::sleep_for(
            std::chrono::duration<double, std::milli>(options_.token_ms));
      }
    };
    if (!stream) {
      ++in_flight_;
      for (long t = 0; t < output; ++t) await(t);
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
        [this, model, output, await](size_t, httplib::DataSink& sink) {
          for (long t = 0; t < output; ++t) {
            await(t);
            std::string chunk =
                Chunk(options_.name, model, static_cast<int>(t));
            if (!sink.write(chunk.data(), chunk.size())) break;
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
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_.notify_all();
  tokens_.notify_all();
  server_->stop();
  listener_.join();
  if (stepper_.joinable()) stepper_.join();
}

}  // namespace migserve::proxy
