#include "proxy/testing/grpc_replicas.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>

#include "util/test_util.h"

extern char** environ;

namespace migserve::proxy {
namespace {

constexpr char kPython[] = "/usr/bin/python3";

std::string Script() {
  return testing::SourcePath("src/proxy/testing/grpc_replica.py");
}

}  // namespace

GrpcReplicas::GrpcReplicas(const std::vector<std::string>& names) {
  int in[2];
  int out[2];
  if (pipe(in) != 0) return;
  if (pipe(out) != 0) {
    close(in[0]);
    close(in[1]);
    return;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, in[1]);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::vector<std::string> args = {kPython, Script(), "serve"};
  args.insert(args.end(), names.begin(), names.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (posix_spawn(&pid_, kPython, &actions, nullptr, argv.data(), environ) !=
      0) {
    pid_ = -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  stdin_ = in[1];
  FILE* lines = fdopen(out[0], "r");
  char buffer[256];
  while (pid_ > 0 && lines && std::fgets(buffer, sizeof buffer, lines)) {
    std::istringstream line(buffer);
    std::string name;
    int port = 0;
    line >> name >> port;
    if (name == "ready") break;
    ports_[name] = port;
  }
  if (lines) std::fclose(lines);
}

GrpcReplicas::~GrpcReplicas() {
  if (stdin_ >= 0) close(stdin_);
  if (pid_ > 0) waitpid(pid_, nullptr, 0);
}

int GrpcReplicas::port(const std::string& name) const {
  auto it = ports_.find(name);
  return it == ports_.end() ? 0 : it->second;
}

std::string GrpcCall(int port, const std::string& service) {
  std::string command =
      std::string(kPython) + " " + Script() + " call " + std::to_string(port) +
      " " + (service.empty() ? std::string("-") : service) + " 2>/dev/null";
  FILE* out = popen(command.c_str(), "r");
  if (!out) return "cannot run " + command;
  std::string text;
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, out)) text += buffer;
  pclose(out);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace migserve::proxy
