// pinpoint-k8s: the kubelet device plugin for pinpoint (docs/kubernetes.md).
#include <signal.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "common/log.h"
#include "common/version.h"
#include "k8s/device/pinpoint_slice_source.h"
#include "k8s/deviceplugin/plugin.h"
#include "pinpoint/client.h"
#include "pinpoint/units.h"

int main(int argc, char** argv) {
  using namespace pinpoint;
  CLI::App app{"pinpoint-k8s: offers pinpointd's GPUs and GPU memory to the kubelet"};
  k8s::PluginOptions options;
  std::string mem_unit = "1GiB", log_level = "info";
  k8s::SliceSourceOptions leases;
  leases.socket_path = DefaultSocketPath();
  leases.hook_path = "/usr/libexec/pinpoint/pinpoint-cdi-hook";
  app.add_option("--socket", leases.socket_path, "pinpointd's socket (the same path on the host)")
      ->capture_default_str();
  app.add_option("--cdi-dir", leases.cdi_dir, "where each lease's CDI spec is written (the host's)")
      ->capture_default_str();
  app.add_option("--cdi-hook", leases.hook_path, "pinpoint-cdi-hook's path on the host")
      ->capture_default_str();
  app.add_option("--lease-user", leases.lease_user,
                 "the user whose MPS server the pods' slices use (default: root); see docs");
  app.add_option("--kubelet-dir", options.kubelet_dir, "the kubelet's device-plugins directory")
      ->capture_default_str();
  app.add_option("--kubelet-socket", options.kubelet_socket, "the kubelet's socket in it")
      ->capture_default_str();
  app.add_option("--mem-unit", mem_unit, "one pinpoint.io/gpu-mem device is this much memory")
      ->capture_default_str();
  app.add_option("--poll-interval-ms", options.poll_interval_ms,
                 "how often pinpointd's devices are read")
      ->capture_default_str();
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error");
  app.set_version_flag("--version", std::string("pinpoint-k8s ") + VersionText());
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (!log::SetLevel(log_level)) {
    std::fprintf(stderr, "pinpoint-k8s: unknown --log-level '%s'\n", log_level.c_str());
    return 2;
  }
  auto unit = ParseSize(mem_unit);
  if (!unit.ok()) {
    std::fprintf(stderr, "pinpoint-k8s: --mem-unit: %s\n", unit.status().message().c_str());
    return 2;
  }
  options.mem_unit_bytes = *unit;
  for (const auto& [flag, path] :
       {std::pair{"--cdi-dir", leases.cdi_dir}, std::pair{"--cdi-hook", leases.hook_path}}) {
    if (path.empty() || path[0] != '/') {
      std::fprintf(stderr, "pinpoint-k8s: %s must be an absolute path\n", flag);
      return 2;
    }
  }
  if (Status s = k8s::ValidateOptions(options); !s.ok()) {
    std::fprintf(stderr, "pinpoint-k8s: %s\n", s.message().c_str());
    return 2;
  }

  // Signals go to sigwait below, never to gRPC's threads; sockets are made for root alone.
  sigset_t mask;
  sigemptyset(&mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&mask, sig);
  pthread_sigmask(SIG_BLOCK, &mask, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  ::umask(077);

  k8s::PinpointSliceSource source(leases);
  k8s::Plugin plugin(options, source);
  if (Status s = plugin.Start(); !s.ok()) {
    std::fprintf(stderr, "pinpoint-k8s: %s\n", s.message().c_str());
    return 1;
  }
  for (;;) {
    int sig = 0;
    if (sigwait(&mask, &sig) != 0) continue;
    if (sig == SIGHUP) {
      plugin.PollNow();  // read pinpointd's devices now
      continue;
    }
    log::Info("k8s: stopping on signal {}", sig);
    break;
  }
  plugin.Stop();
  return 0;
}
