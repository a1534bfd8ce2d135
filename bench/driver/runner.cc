#include "bench/driver/runner.h"

#include <signal.h>

#include <cstdlib>

#include "bench/driver/proc.h"
#include "common/file_util.h"
#include "common/process.h"

namespace pinpoint::bench {

std::string QuitMpsControl(const std::string& control_binary, const std::string& pipe_dir) {
  int64_t pid = 0;
  Result<std::string> pid_text = ReadFile(pipe_dir + "/nvidia-cuda-mps-control.pid");
  if (pid_text.ok()) pid = std::atoll(pid_text->c_str());
  Result<CommandResult> r = RunCommand(
      {control_binary}, ChildEnvironment({"CUDA_MPS_PIPE_DIRECTORY=" + pipe_dir}), 10000, "quit\n");
  std::string problem;
  if (!r.ok()) problem = "quit: " + r.status().message();
  if (pid > 0 && !WaitForExit(pid, 10000)) {
    ::kill(static_cast<pid_t>(pid), SIGKILL);
    problem += (problem.empty() ? "" : "; ") + std::string("control daemon ") +
               std::to_string(pid) + " did not quit in 10 s: killed";
  }
  return problem;
}

}  // namespace pinpoint::bench
