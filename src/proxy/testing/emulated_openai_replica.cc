#include "proxy/testing/emulated_openai_replica.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>

#include "util/testing/http_listener.h"

namespace migserve::proxy {
namespace {

// An error as vLLM's server answers one (ErrorResponse: an `error` object
// with message, type, param and the status as its code).
std::string VllmError(const std::string& message, const std::string& type,
                      const std::string& param, int status) {
  return nlohmann::json({{"error",
                          {{"message", message},
                           {"type", type},
                           {"param", param},
                           {"code", status}}}})
             .dump() +
         "\n";
}

// What an answer says of itself: its id, object, creation time and model.
struct Answer {
  std::string id;
  bool chat = true;  // /v1/chat/completions, else /v1/completions
  long created = 0;
  std::string model;
  std::string replica;
};

// The choice of token `token` (0-based; `last`: the output's end).
nlohmann::json Choice(const Answer& a, const std::string& text, bool delta,
                      bool last) {
  nlohmann::json choice = {{"index", 0}};
  if (!a.chat) {
    choice["text"] = text;
  } else if (delta) {
    choice["delta"] = {{"content", text}};
  } else {
    choice["message"] = {{"role", "assistant"}, {"content", text}};
  }
  choice["finish_reason"] = last ? nlohmann::json("length") : nlohmann::json();
  return choice;
}

nlohmann::json Head(const Answer& a, bool chunk) {
  return {
      {"id", a.id},
      {"object", a.chat ? (chunk ? "chat.completion.chunk" : "chat.completion")
                        : "text_completion"},
      {"created", a.created},
      {"model", a.model},
      {"replica", a.replica}};
}

nlohmann::json Usage(long prompt, long output) {
  return {{"prompt_tokens", prompt},
          {"completion_tokens", output},
          {"total_tokens", prompt + output}};
}

// One chunk of a streamed answer, as vLLM sends it.
std::string Chunk(const Answer& a, long token, bool last) {
  nlohmann::json chunk = Head(a, true);
  chunk["choices"] =
      nlohmann::json::array({Choice(a, std::to_string(token), true, last)});
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

void EmulatedOpenAiReplica::NotePrefix(const nlohmann::json& body) {
  auto messages = body.find("messages");
  if (messages == body.end() || !messages->is_array()) return;
  std::lock_guard<std::mutex> lock(prefixes_mu_);
  if (messages->size() >= 3) {
    ++follow_ups_;
    nlohmann::json earlier(messages->begin(), messages->end() - 2);
    if (prefixes_.count(earlier.dump())) ++prefix_hits_;
  }
  prefixes_.insert(messages->dump());
}

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
  if (options_.served.empty()) {
    options_.served = {options_.service, options_.model};
  }
  server_->Get("/v1/models", [this](const httplib::Request&,
                                    httplib::Response& res) {
    nlohmann::json data = nlohmann::json::array();
    for (const std::string& name : options_.served) {
      data.push_back({{"id", name},
                      {"object", "model"},
                      {"owned_by", "vllm"},
                      {"root", options_.model}});
    }
    res.set_content(nlohmann::json({{"object", "list"}, {"data", data}}).dump(),
                    "application/json");
  });
  auto answer = [this](const httplib::Request& req, httplib::Response& res) {
    ++hits_;
    nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
    if (!body.is_object()) {
      res.status = 400;
      res.set_content(VllmError("the request body is not a JSON object",
                                "BadRequestError", "", 400),
                      "application/json");
      return;
    }
    const nlohmann::json& asked =
        body.contains("model") ? body["model"] : nlohmann::json();
    // vLLM serves a request without a model as its first name.
    std::string model = asked.is_string() ? asked.get<std::string>() : "";
    if (!model.empty() &&
        std::find(options_.served.begin(), options_.served.end(), model) ==
            options_.served.end()) {
      ++misrouted_;
      res.status = 404;
      res.set_content(
          VllmError(fmt::format("The model `{}` does not exist.", model),
                    "NotFoundError", "model", 404),
          "application/json");
      return;
    }
    NotePrefix(body);
    Answer a;
    a.id = fmt::format("cmpl-{}-{}", options_.name, hits_.load());
    a.chat = req.path == "/v1/chat/completions";
    a.created = static_cast<long>(std::time(nullptr));
    a.model = model.empty() ? options_.served.front() : model;
    a.replica = options_.name;
    const bool stream = body.value("stream", false);
    const nlohmann::json options =
        body.value("stream_options", nlohmann::json::object());
    const bool usage =
        options.is_object() && options.value("include_usage", false);
    long output = options_.tokens;
    for (const char* key : {"max_tokens", "max_completion_tokens"}) {
      if (body.contains(key) && body[key].is_number_integer()) {
        output = std::max(1L, body[key].get<long>());
      }
    }
    const long prompt = PromptWords(body);
    // vLLM's checks of a request against its --max-model-len.
    const long most = options_.max_model_len;
    if (most > 0 && (prompt >= most || prompt + output > most)) {
      res.status = 400;
      res.set_content(
          prompt >= most
              ? VllmError(fmt::format("This model's maximum context length is "
                                      "{} tokens. However, your request has "
                                      "{} input tokens. Please reduce the "
                                      "length of the input messages.",
                                      most, prompt),
                          "BadRequestError", "input_tokens", 400)
              : VllmError(
                    fmt::format("'max_tokens' or 'max_completion_tokens' "
                                "is too large: {}. This model's maximum "
                                "context length is {} tokens and your "
                                "request has {} input tokens ({} > {} - "
                                "{}).",
                                output, most, prompt, output, most, prompt),
                    "BadRequestError", "max_tokens", 400),
          "application/json");
      return;
    }
    // The batcher's request, or the fixed pace's.
    std::optional<size_t> id;
    if (batcher_) {
      id = Admit(prompt, output);
      if (!id) {
        res.status = 400;
        res.set_content(VllmError("too long for the KV cache",
                                  "BadRequestError", "input_tokens", 400),
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
      std::string text;
      for (long t = 0; t < output; ++t) {
        await(t);
        text += (t > 0 ? " " : "") + std::to_string(t);
      }
      --in_flight_;
      nlohmann::json whole = Head(a, false);
      whole["choices"] = nlohmann::json::array({Choice(a, text, false, true)});
      whole["usage"] = Usage(prompt, output);
      res.set_content(whole.dump() + "\n", "application/json");
      return;
    }
    ++in_flight_;
    res.set_chunked_content_provider(
        "text/event-stream",
        [a, prompt, output, usage, await](size_t, httplib::DataSink& sink) {
          for (long t = 0; t < output; ++t) {
            await(t);
            std::string chunk = Chunk(a, t, t + 1 == output);
            if (!sink.write(chunk.data(), chunk.size())) return false;
          }
          if (usage) {
            nlohmann::json last = Head(a, true);
            last["choices"] = nlohmann::json::array();
            last["usage"] = Usage(prompt, output);
            std::string chunk = "data: " + last.dump() + "\n\n";
            sink.write(chunk.data(), chunk.size());
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
