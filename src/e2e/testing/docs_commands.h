// The commands a document gives, read as a reader pastes them, so that the
// tests run the docs' procedures as written (issue 90).
#ifndef MIGSERVE_E2E_TESTING_DOCS_COMMANDS_H_
#define MIGSERVE_E2E_TESTING_DOCS_COMMANDS_H_

#include <regex>
#include <string>
#include <vector>

#include "boundary/input_file.h"
#include "util/test_util.h"

namespace migserve::e2e {

// The commands in backticks in `doc` (a path in the source tree) that
// start with `start`, in order, each with its line breaks and runs of
// spaces made one space; only those after `after` where it is given.
inline std::vector<std::string> DocsCommands(const std::string& doc,
                                             const std::string& start,
                                             const std::string& after = "") {
  std::string text = ReadFile(testing::SourcePath(doc)).value();
  size_t from = after.empty() ? 0 : text.find(after);
  std::vector<std::string> commands;
  for (size_t at = text.find("`" + start, from); at != std::string::npos;
       at = text.find("`" + start, at + 1)) {
    size_t end = text.find('`', at + 1);
    commands.push_back(std::regex_replace(text.substr(at + 1, end - at - 1),
                                          std::regex("\\s+"), " "));
  }
  return commands;
}

// The first of them, or "".
inline std::string DocsCommand(const std::string& doc,
                               const std::string& start) {
  std::vector<std::string> all = DocsCommands(doc, start);
  return all.empty() ? "" : all[0];
}

// The commands of `doc`'s indented code blocks (four spaces) that start
// with `start`, after `after` where it is given, in order: each with its
// continuation lines (a line ending in a backslash) joined and runs of
// spaces made one space, as the shell reads them.
inline std::vector<std::string> DocsIndentedCommands(
    const std::string& doc, const std::string& start,
    const std::string& after = "") {
  std::string text = ReadFile(testing::SourcePath(doc)).value();
  const std::string lead = "\n    " + start;
  std::vector<std::string> commands;
  for (size_t at = text.find(lead, after.empty() ? 0 : text.find(after));
       at != std::string::npos; at = text.find(lead, at + 1)) {
    std::string command;
    size_t line = at + 1;
    for (;;) {
      size_t end = text.find('\n', line);
      std::string content = text.substr(line, end - line);
      const bool goes_on = content.ends_with("\\");
      command += goes_on ? content.substr(0, content.size() - 1) : content;
      if (!goes_on || end == std::string::npos) break;
      line = end + 1;
    }
    commands.push_back(
        std::regex_replace(command.substr(command.find_first_not_of(' ')),
                           std::regex("\\s+"), " "));
  }
  return commands;
}

// The shell block of `doc` whose first line starts with `start`, up to its
// closing fence.
inline std::string DocsBlock(const std::string& doc, const std::string& start) {
  std::string text = ReadFile(testing::SourcePath(doc)).value();
  size_t at = text.find("```sh\n" + start);
  if (at == std::string::npos) return "";
  at += 6;
  return text.substr(at, text.find("```", at) - at);
}

}  // namespace migserve::e2e

#endif  // MIGSERVE_E2E_TESTING_DOCS_COMMANDS_H_
