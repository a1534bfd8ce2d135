#include "cli/companions.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cli/completion.h"
#include "common/companion.h"

namespace pinpoint::cli {

int ExecCompanion(const std::string& program, int argc, char** argv, int command_arg,
                  const std::string& socket, std::ostream& err) {
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  std::string self = n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string();
  std::string path = CompanionPath(program);
  ::setenv("PINPOINT_BIN", self.c_str(), 1);
  if (!socket.empty()) ::setenv("PINPOINT_SOCKET", socket.c_str(), 1);
  std::vector<char*> args = {path.data()};
  for (int i = command_arg + 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  ::execv(path.c_str(), args.data());
  err << "pinpoint: cannot run " << path << ": " << std::strerror(errno) << " (install " << program
      << " next to pinpoint, or in libexec/pinpoint beside its bin/)\n";
  return 1;
}

int PrintCompletion(const CLI::App& app, const std::string& shell, std::ostream& out,
                    std::ostream& err) {
  CompletionCommand root = DescribeApp(app);
  root.name = "pinpoint";
  for (auto& companion :
       CompanionCommands()) {  // in place of the help's entry, which has no options
    std::erase_if(root.subcommands,
                  [&](const CompletionCommand& c) { return c.name == companion.name; });
    root.subcommands.push_back(std::move(companion));
  }
  if (shell == "bash")
    out << BashCompletion(root);
  else if (shell == "zsh")
    out << ZshCompletion(root);
  else {
    err << "pinpoint: completion needs a shell: bash or zsh\n";
    return 2;
  }
  return 0;
}

}  // namespace pinpoint::cli
