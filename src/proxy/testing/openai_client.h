// The official OpenAI Node SDK (npm `openai`, tools/openai-client, which
// `make test` installs) as the client of the LLM tests: what a real client
// of the proxy sees, its error classes included.
#ifndef MIGSERVE_PROXY_TESTING_OPENAI_CLIENT_H_
#define MIGSERVE_PROXY_TESTING_OPENAI_CLIENT_H_

#include <nlohmann/json.hpp>

#include "util/status_or.h"

namespace migserve::proxy {

// Runs tools/openai-client/drive.mjs against http://127.0.0.1:`port`/v1
// with `plan` ({"concurrency", "requests"}, as the script reads it) and
// returns its results, one per request sent, in order. Unavailable where
// node or the SDK cannot run (the message says why).
StatusOr<nlohmann::json> DriveOpenAiClient(int port,
                                           const nlohmann::json& plan);

}  // namespace migserve::proxy

#endif  // MIGSERVE_PROXY_TESTING_OPENAI_CLIENT_H_
