// pinpointd: the pinpoint node agent. See docs/admin.md.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "common/log.h"
#include "common/version.h"
#include "daemon/setup/config.h"
#include "daemon/setup/daemon.h"
#include "daemon/setup/log_format.h"
#include "gpu/backend_factory.h"
#include "gpu/mig_report.h"

int main(int argc, char** argv) {
  using namespace pinpoint;
  daemon::BlockDaemonSignals();  // before NVML, whose nvmlInit starts threads
  CLI::App app{"pinpointd: gives each job exactly the GPU slice it asks for"};
  std::string config_path, state_dir, socket_path, backend, log_level = "info";
  gpu::GpuBackendOptions backend_options;
  bool print_default = false;
  bool mig_profiles = false;
  int ready_fd = -1;
  app.add_option("-c,--config", config_path, "configuration file (JSON, docs/admin.md)");
  app.add_option("--state-dir", state_dir, "state directory (overrides the config)");
  app.add_option("--socket", socket_path, "socket path (overrides the config)");
  app.add_option(
      "--backend", backend,
      "auto | nvml | simulated:<h100x2|a100x8|a100x8-mig|v100sx8> | simulated-file:<path>");
  app.add_option(
         "--device-root", backend_options.device_root,
         "where backend auto looks for NVIDIA devices (dev/nvidia*, proc/driver/nvidia); for tests")
      ->capture_default_str();
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error");
  app.add_option("--ready-fd", ready_fd, "write \"ready\\n\" to this descriptor once serving");
  app.add_flag("--print-default-config", print_default,
               "print the embedded default config and exit");
  app.add_flag("--mig-profiles", mig_profiles,
               "print each GPU's MIG mode and the MIG profiles and placements its driver offers, "
               "and exit (read-only)");
  app.set_version_flag("--version", std::string("pinpointd ") + VersionText());
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (print_default) {
    std::cout << daemon::DefaultConfigJson() << "\n";
    return 0;
  }
  if (!log::SetLevel(log_level)) {
    std::fprintf(stderr,
                 "pinpointd: unknown --log-level '%s' (trace, debug, info, warn, error, off)\n",
                 log_level.c_str());
    return 2;
  }
  daemon::UseEscapingLogFormat();
  daemon::Config config;
  if (!config_path.empty()) {
    auto loaded = daemon::LoadConfig(config_path);
    if (!loaded.ok()) {
      std::fprintf(stderr, "pinpointd: %s\n", loaded.status().message().c_str());
      return 2;
    }
    config = *loaded;
  }
  if (!state_dir.empty()) config.state_dir = state_dir;
  if (!socket_path.empty()) config.socket_path = socket_path;
  if (!backend.empty()) config.backend = backend;
  char cwd[4096];
  if (::getcwd(cwd, sizeof(cwd)) != nullptr) {
    if (!config.state_dir.empty() && config.state_dir[0] != '/')
      config.state_dir = std::string(cwd) + "/" + config.state_dir;
    if (!config.socket_path.empty() && config.socket_path[0] != '/')
      config.socket_path = std::string(cwd) + "/" + config.socket_path;
  }
  std::string why;
  auto gpu = gpu::MakeGpuBackend(config.backend, &why, backend_options);
  if (!gpu.ok()) {
    std::fprintf(stderr, "pinpointd: %s\n", gpu.status().message().c_str());
    return 2;
  }
  if (mig_profiles) {
    auto report = gpu::MigReport(**gpu);
    if (!report.ok()) {
      std::fprintf(stderr, "pinpointd: %s\n", report.status().message().c_str());
      return 1;
    }
    std::cout << *report;
    return 0;
  }
  return daemon::RunDaemon(config, std::move(gpu).value(), why, ready_fd);
}
