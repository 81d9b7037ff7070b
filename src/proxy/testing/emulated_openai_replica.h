// A stand-in for one language-model replica behind the proxy (vLLM's
// OpenAI server, reduced to what routing and timing need, and as strict
// as vLLM where a client can see it): an HTTP server on 127.0.0.1 that
// answers POST /v1/chat/completions and /v1/completions with `tokens`
// tokens `token_ms` apart or, given a slice, with the tokens a continuous
// batcher of that slice (llm/continuous_batcher.h) gives the request on the
// wall clock, streamed as server-sent events when the body asks ("stream":
// true), each chunk naming the replica; GET /health and /v1/models.
// As vLLM's server (vllm/entrypoints/openai/): a body `model` it does not
// serve gets 404 and its error object (type NotFoundError, param model;
// no `model` is served as its first name); a prompt of max_model_len tokens
// or more, or prompt plus max_tokens past it, gets 400 (BadRequestError);
// an answer's `model` is the request's; a non-streamed answer carries
// `usage`, and a stream's last chunk before `data: [DONE]` carries it where
// the body asks (stream_options.include_usage). It counts the requests it
// got, those in flight, and those refused for their model's name.
#ifndef MIGSERVE_PROXY_TESTING_EMULATED_OPENAI_REPLICA_H_
#define MIGSERVE_PROXY_TESTING_EMULATED_OPENAI_REPLICA_H_

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "llm/continuous_batcher.h"
#include "llm/slice_model.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace migserve::proxy {

struct EmulatedOpenAiOptions {
  std::string name;     // said in every chunk ("replica")
  std::string service;  // what it serves
  std::string model;
  int tokens = 4;
  double token_ms = 0;
  // The names it answers to (vLLM's --served-model-name); empty: its
  // service and its model.
  std::vector<std::string> served = {};
  // vLLM's --max-model-len, a prompt's words counted as its tokens; 0:
  // none (a slice's KV room still bounds a request).
  long max_model_len = 0;
  // Where set, a continuous batcher of this slice makes the tokens, each
  // step taking `time_scale` times its modelled time: a request's prompt
  // is its words (messages' contents or prompt; one token each, at least
  // one), its output `max_tokens` (else `tokens`). A request the slice's KV
  // room cannot hold is answered 400, as vLLM does.
  std::optional<llm::SliceCapacity> slice = std::nullopt;
  double time_scale = 1;
};

class EmulatedOpenAiReplica {
 public:
  explicit EmulatedOpenAiReplica(EmulatedOpenAiOptions options);
  ~EmulatedOpenAiReplica();
  EmulatedOpenAiReplica(const EmulatedOpenAiReplica&) = delete;
  EmulatedOpenAiReplica& operator=(const EmulatedOpenAiReplica&) = delete;

  int port() const { return port_; }
  int hits() const { return hits_; }
  int in_flight() const { return in_flight_; }
  int misrouted() const { return misrouted_; }
  // Its prefix cache, as a conversation sees it: the chats that continue
  // a conversation (three messages or more: the earlier turns, the
  // answer, the next question), and those whose earlier turns (all but
  // the last two messages) it served, so that vLLM's prefix cache would
  // hold them. A cache without bound.
  int follow_ups() const { return follow_ups_; }
  int prefix_hits() const { return prefix_hits_; }

 private:
  // The batcher's loop: a step, its time, then its tokens shown.
  void Step();
  // Counts a chat `body` in follow_ups and prefix_hits, and keeps its
  // messages.
  void NotePrefix(const nlohmann::json& body);
  // Adds a request to the batcher; its id, or nullopt where it cannot fit.
  std::optional<size_t> Admit(long prompt, long output);
  // Waits until request `id` has more than `shown` tokens; how many it has.
  long WaitForTokens(size_t id, long shown);

  EmulatedOpenAiOptions options_;
  std::mutex mu_;
  std::condition_variable work_, tokens_;
  std::unique_ptr<llm::ContinuousBatcher> batcher_;  // given a slice
  std::vector<long> shown_;  // per request, the tokens its steps have given
  bool stopping_ = false;
  std::thread stepper_;
  std::unique_ptr<httplib::Server> server_;
  std::thread listener_;
  int port_ = 0;
  std::atomic<int> hits_{0};
  std::atomic<int> in_flight_{0};
  std::atomic<int> misrouted_{0};
  std::mutex prefixes_mu_;
  std::set<std::string> prefixes_;  // the messages of every chat served
  std::atomic<int> follow_ups_{0};
  std::atomic<int> prefix_hits_{0};
};

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_TESTING_EMULATED_OPENAI_REPLICA_H_
