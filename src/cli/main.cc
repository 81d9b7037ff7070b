#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "queueing/credit_cache.h"
#include "util/build_id.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // Credits computed by an earlier run of this build are read back instead
  // of simulated again (docs/capacity.md, "Credits once").
  migserve::queueing::CreditCache credits(
      migserve::queueing::DefaultCreditCachePath(), migserve::BuildId(),
      [](const std::string& line) {
        std::cerr << "migserve: warning: " << line << std::endl;
      });
  migserve::queueing::ScopedCreditCache use(&credits);
  return migserve::cli::RunCli(args, std::cout, std::cerr);
}
