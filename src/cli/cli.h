// The migserve command line: a table of subcommands (ninja's tool table).
#ifndef MIGSERVE_CLI_CLI_H_
#define MIGSERVE_CLI_CLI_H_

#include <ostream>
#include <string>
#include <vector>

namespace migserve::cli {

// Runs `migserve args...` (args excludes the program name) and returns the
// exit code. Output goes to `out`, messages and progress to `err`.
int RunCli(const std::vector<std::string>& args, std::ostream& out,
           std::ostream& err);

}  // namespace migserve::cli

#endif  // MIGSERVE_CLI_CLI_H_
