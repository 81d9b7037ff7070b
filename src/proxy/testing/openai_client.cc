#include "proxy/testing/openai_client.h"

#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "util/test_util.h"

namespace migserve::proxy {

StatusOr<nlohmann::json> DriveOpenAiClient(int port,
                                           const nlohmann::json& plan) {
  static int runs = 0;
  std::string input = testing::WriteTempFile(
      fmt::format("openai-plan-{}.json", ++runs), plan.dump());
  std::string errors = input + ".err";
  std::string command =
      fmt::format("node {} http://127.0.0.1:{}/v1 < {} 2> {}",
                  testing::SourcePath("tools/openai-client/drive.mjs"), port,
                  input, errors);
  FILE* out = popen(command.c_str(), "r");
  if (!out) return Status::Unavailable("cannot run " + command);
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, out)) > 0) {
    text.append(buffer, n);
  }
  int rc = pclose(out);
  nlohmann::json answer = nlohmann::json::parse(text, nullptr, false);
  if (rc != 0 || !answer.is_object() || !answer.contains("results")) {
    std::string why;
    if (FILE* err = std::fopen(errors.c_str(), "r")) {
      while ((n = std::fread(buffer, 1, sizeof buffer, err)) > 0) {
        why.append(buffer, n);
      }
      std::fclose(err);
    }
    return Status::Unavailable(fmt::format("{} exited {}: {}{}", command, rc,
                                           why.substr(0, 2000),
                                           text.substr(0, 500)));
  }
  return answer["results"];
}

}  // namespace migserve::proxy
