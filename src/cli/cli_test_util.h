// What the CLI tests share: running a command in-process and keeping its
// exit code and both streams.
#ifndef MIGSERVE_CLI_CLI_TEST_UTIL_H_
#define MIGSERVE_CLI_CLI_TEST_UTIL_H_

#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace migserve::cli {

struct CliResult {
  int code;
  std::string out;
  std::string err;
};

// Runs `migserve args...` through RunCli.
inline CliResult Cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int code = RunCli(args, out, err);
  return {code, out.str(), err.str()};
}

}  // namespace migserve::cli

#endif  // MIGSERVE_CLI_CLI_TEST_UTIL_H_
