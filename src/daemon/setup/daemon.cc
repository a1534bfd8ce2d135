#include "daemon/setup/daemon.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "api/server.h"
#include "common/companion.h"
#include "common/cpu_list.h"
#include "common/file_util.h"
#include "common/log.h"
#include "common/version.h"
#include "daemon/jobs/users.h"
#include "daemon/node/node.h"
#include "daemon/service/service.h"
#include "daemon/setup/command_checkpointer.h"
#include "daemon/setup/daemon_loop.h"
#include "daemon/setup/inventory_builder.h"
#include "daemon/setup/mig_setup.h"
#include "daemon/setup/mps_plan.h"
#include "daemon/setup/retention.h"
#include "daemon/setup/sharing_setup.h"
#include "gpu/simulated_backend.h"
#include "launch/cgroup.h"
#include "launch/container_cgroups.h"
#include "launch/output_space.h"
#include "launch/process_launcher.h"
#include "metrics/http_server.h"
#include "mps/env_only_mps.h"
#include "mps/mps_daemons.h"
#include "pinpoint/units.h"
#include "store/id_mark.h"
#include "store/job_store.h"
#include "watch/process_owner.h"
#include "watch/watcher.h"

namespace pinpoint::daemon {

namespace {

// Beside pinpointd, else in <prefix>/libexec/pinpoint (the package; common/companion.h).
// How long one suspend or resume of a job may take before it is killed and undone.
constexpr int64_t kCheckpointTimeoutMs = 300'000;

std::string ShimPath(const Config& config) {
  if (!config.shim_path.empty()) return config.shim_path;
  return CompanionPath("pinpoint-shim");
}

// The node's short host name, and pinpoint's srun (<libexec>/pinpoint/slurm/srun, or slurm/srun
// beside pinpointd in a build tree) when it is installed.
SlurmFacts SlurmFactsOfThisNode() {
  SlurmFacts facts;
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0) facts.node_name = host;
  facts.node_name = facts.node_name.substr(0, facts.node_name.find('.'));
  std::string srun = CompanionPath("slurm/srun");
  if (::access(srun.c_str(), X_OK) == 0)
    facts.srun_dir = srun.substr(0, srun.rfind('/'));
  else
    log::Info("no pinpoint srun at {}: jobs get no srun of pinpoint's", srun);
  return facts;
}

// A directory only pinpointd's user may enter: `path` itself when it already is one (its own, no
// link, no access for others), else made anew, whatever was there moved aside.
Status MakePrivateDir(const std::string& path) {
  if (auto dir = OpenDirNoFollow(path); dir.ok()) {
    struct stat st {};
    if (::fstat(dir->get(), &st) == 0 && st.st_uid == ::geteuid() && (st.st_mode & 077) == 0)
      return Status::Ok();
  }
  std::string moved_to;
  PP_RETURN_IF_ERROR(MakeFreshDir(path, 0700, &moved_to));
  if (!moved_to.empty())
    log::Warn("{} was not pinpointd's own private directory; moved it to {}", path, moved_to);
  return Status::Ok();
}

// One daemon per state directory: a second one would start the same jobs twice. The lock is 0600
// in <state_dir>/private (MakePrivateDir): no user can open it, so none can hold it and keep
// pinpointd from starting.
Result<int> LockStateDir(const std::string& state_dir) {
  PP_RETURN_IF_ERROR(MakePrivateDir(state_dir + "/" + kPrivateDirName));
  std::string path = DaemonLockPath(state_dir);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return IoError("open " + path + ": " + ErrnoText(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return Unavailable("another pinpointd is running on " + state_dir);
  }
  // Also an OFD lock, which the jobs' supervisors can ask about without taking it (a flock can
  // only be tried by taking it, which would keep a starting pinpointd out for that moment).
  struct flock whole {};
  whole.l_type = F_WRLCK;
  whole.l_whence = SEEK_SET;
  if (::fcntl(fd, F_OFD_SETLK, &whole) != 0) {
    int err = errno;
    ::close(fd);
    return IoError("lock " + path + ": " + ErrnoText(err));
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::write(fd, pid.data(), pid.size()) < 0) {
    // The pid in the lock file is informational only.
  }
  return fd;
}

// Real MPS daemons where they can run; only the client environment elsewhere, with slices on
// mps devices refused where the node could run MPS but cannot (PlanMps). Said in the log.
Result<std::unique_ptr<mps::MpsBackend>> MakeMps(const Config& config, const MpsPlan& plan,
                                                 Clock* clock) {
  std::string mps_root = config.mps_dir.empty() ? config.state_dir + "/mps" : config.mps_dir;
  Status made = MakeDirs(mps_root, 0755);
  if (!made.ok()) return made;
  if (plan.daemons) {
    mps::MpsDaemonsOptions o;
    o.mps_root = mps_root;
    o.control_binary = config.mps_control;
    o.idle_quit_ms = config.mps_idle_quit_ms;
    o.switch_user = ::getuid() == 0;
    o.rules = MpsRulesOf(config, plan);
    log::Info("MPS: one control daemon per device and user under {} ({})", mps_root,
              config.mps_control);
    return std::unique_ptr<mps::MpsBackend>(new mps::MpsDaemons(o, clock));
  }
  if (plan.refuse_slices) {
    log::Error(
        "MPS: cannot be started: {}; slices on mps devices are refused, whole GPUs still run. "
        "Set mps_control to the control binary, or allow_unenforced_slices: true to run slices "
        "without enforced limits",
        plan.why_not);
  } else {
    log::Warn(
        "MPS: no control daemons: {}; slices get their MPS environment only, without enforced "
        "limits",
        plan.why_not);
  }
  return std::unique_ptr<mps::MpsBackend>(new mps::EnvOnlyMps(mps_root, MpsRulesOf(config, plan)));
}

int Fail(const Status& s) {
  log::Critical("cannot start: {}", s.message());
  return 1;
}

void LogInventory(const sched::Inventory& inv) {
  for (const auto& d : inv.devices) {
    log::Info("device {}: {} {} ({}, {} SMs) mode {}{}", d.index, d.uuid, d.name,
              FormatSize(d.mem_bytes), d.sm_count, SharingModeName(d.mode),
              d.numa_node >= 0 ? ", NUMA node " + std::to_string(d.numa_node) : "");
  }
  log::Info("host: {} CPUs, {} memory", inv.host.cpus, FormatSize(inv.host.mem_bytes));
}

// The socket server's bounds from the configuration; descriptors enough for them.
api::ServerOptions ServerOptionsFor(const Config& config, Clock* clock) {
  api::ServerOptions o;
  o.limits.max_connections = static_cast<size_t>(config.max_connections);
  o.limits.max_connections_per_uid = static_cast<size_t>(config.max_connections_per_uid);
  o.limits.idle_timeout_ms = config.idle_timeout_ms;
  o.limits.max_reply_backlog_bytes = config.max_reply_backlog_bytes;
  o.clock = clock;
  rlimit files{};
  rlim_t wanted =
      static_cast<rlim_t>(config.max_connections) + 256;  // the store, jobs, MPS, metrics
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < wanted) {
    files.rlim_cur = std::min(wanted, files.rlim_max);
    if (::setrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur < wanted)
      log::Warn("max_connections {} needs {} open files; the limit is {}", config.max_connections,
                wanted, files.rlim_cur);
  }
  return o;
}

// A simulated node's stand-in GPU device nodes, <state_dir>/simdev/nvidia<N>, nvidiactl,
// nvidia-uvm, nvidia-uvm-tools: character devices with /dev/null's numbers, so a container can
// be given "its GPU" and reads nothing from it. Made only by root (mknod); without them leases
// carry no device nodes.
std::string SimulatedDeviceDir(const std::string& state_dir, const sched::Inventory& inventory) {
  std::string dir = state_dir + "/simdev";
  if (::getuid() != 0 || !MakeDirs(dir, 0755).ok()) return dir;
  std::vector<std::string> names = {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"};
  for (const auto& d : inventory.devices) names.push_back("nvidia" + std::to_string(d.gpu_index));
  for (const auto& name : names) {
    std::string path = dir + "/" + name;
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) continue;
    if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
      log::Warn("simulated device node {}: {}", path, std::strerror(errno));
  }
  return dir;
}

// The node's options from the configuration, the inventory and the backend.
NodeOptions NodeOptionsFor(const Config& config, const sched::Inventory& inventory,
                           const gpu::GpuBackend& backend) {
  NodeOptions options;
  options.identity.state_dir = config.state_dir;
  options.inventory = inventory;
  options.admission.mig_requests = config.mig_requests;
  options.identity.backend_kind = backend.Kind();
  options.identity.simulated = backend.source() == gpu::GpuBackend::Source::kSimulated;
  options.identity.driver_version = backend.DriverVersion();
  options.launch.cancel_grace_ms = config.cancel_grace_ms;
  options.launch.daemon_lock = DaemonLockPath(config.state_dir);
  options.launch.daemon_away_ms = config.daemon_away_limit_s * 1000;
  options.identity.daemon_uid = ::getuid();
  options.watch.mps_fault_policy = config.mps_fault_policy;
  options.watch.mps_fault_drain_after = config.mps_fault_drain_after;
  options.watch.usage_flush_ms = config.usage_flush_ms;
  options.launch.lease_attach_timeout_ms = config.lease_attach_timeout_ms;
  options.admission.priority = {config.max_user_priority, config.priority_users};
  options.admission.qos = config.qos;
  options.admission.default_qos = config.default_qos;
  options.admission.gpu_types_match = config.gpu_types == "match";
  options.admission.env_deny = config.env_deny;
  options.admission.default_time_limit_s = config.default_time_limit_s;
  options.admission.max_time_limit_s = config.max_time_limit_s;
  if (!config.system_cpus.empty()) {
    // The site pins pinpointd to its system CPUs (systemd's CPUAffinity=): jobs get the others
    // of the node, whatever pinpointd's own affinity.
    options.launch.shared_cpus = JobCpus(config).cpus;
    log::Info("host CPUs: {} kept for the system (system_cpus); jobs run on {}",
              FormatCpuList(config.system_cpus), FormatCpuList(options.launch.shared_cpus));
  }
  if (config.cpu_binding == "cpuset") {
    options.launch.cpu_topology = JobCpus(config);
    std::set<int> nodes;
    for (int cpu : options.launch.cpu_topology.cpus)
      nodes.insert(options.launch.cpu_topology.node_of.count(cpu)
                       ? options.launch.cpu_topology.node_of.at(cpu)
                       : 0);
    log::Info(
        "host CPUs: a job gets CPUs of its own while free ones are left (cpu_binding cpuset): {} "
        "on {} NUMA node(s)",
        FormatCpuList(options.launch.cpu_topology.cpus), nodes.size());
  }
  options.pass.default_user_limit = config.default_user_limit;
  options.pass.mps_reclaim_ms = config.mps_reclaim_s * 1000;
  options.pass.user_limits = config.user_limits;
  options.admission.max_array_tasks = config.max_array_tasks;
  options.admission.max_jobs = static_cast<size_t>(config.max_jobs);
  options.admission.max_jobs_per_user = static_cast<size_t>(config.max_jobs_per_user);
  options.admission.max_request_bytes = config.max_request_bytes;
  options.admission.max_user_request_bytes = config.max_user_request_bytes;
  options.launch.output = OutputLimits{.job_bytes = config.max_output_bytes,
                                       .user_bytes = config.max_user_output_bytes,
                                       .reserve_bytes = config.state_reserve_bytes};
  return options;
}

// The watcher's options from the configuration and the inventory.
watch::WatcherOptions WatcherOptionsFor(const Config& config, const sched::Inventory& inventory) {
  watch::WatcherOptions watch_options;
  watch_options.interval_ms = config.watch_interval_ms;
  watch_options.accountant.mem_tolerance_pct = config.gpu_mem_tolerance_pct;
  watch_options.accountant.mem_grace_ms = config.gpu_mem_grace_ms;
  watch_options.gpu_indices = watch::PhysicalGpus(inventory);
  watch_options.settle_deadline_ms = config.settle_deadline_s * 1000;
  return watch_options;
}

// mps_prestart_user: that user's control daemon started on each MPS device now (not on a
// mig-dynamic slot: a kept daemon would hold its instance against a destroy).
Status PrestartMps(const Config& config, const sched::Inventory& inventory, sharing::Backend& mps,
                   UserDirectory& users) {
  if (config.mps_prestart_user.empty()) return Status::Ok();
  auto user = users.ByName(config.mps_prestart_user);
  if (!user.ok()) return InvalidArgument("mps_prestart_user: " + user.status().message());
  for (const auto& d : inventory.devices) {
    if (d.mode != SharingMode::kMps || d.partition.is_slot()) continue;
    Status s = mps.Prestart(sharing::Slice{
        .device_index = d.index, .device_uuid = d.uuid, .uid = user->uid, .gid = user->gid});
    if (!s.ok()) log::Warn("MPS: device {}: prestart: {}", d.index, s.message());
  }
  return Status::Ok();
}

// The state directory's folders and the socket's folder, made where missing.
Status MakeDaemonDirs(const Config& config) {
  for (const std::string& dir :
       {config.state_dir, config.state_dir + "/jobs", config.state_dir + "/mps"}) {
    Status s = MakeDirs(dir, 0755);
    if (!s.ok()) return s;
  }
  std::string socket_dir = config.socket_path.substr(0, config.socket_path.rfind('/'));
  if (!socket_dir.empty()) {
    Status s = MakeDirs(socket_dir, 0755);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

// The job store, its ids above every job directory's so that a lost or restored store never
// reuses one. On a simulated node, the MIG layout changes of earlier runs are made again.
Result<std::unique_ptr<store::JobStore>> OpenJobStore(const Config& config,
                                                      gpu::GpuBackend& backend, bool simulated) {
  auto largest_job_dir = store::LargestJobDirId(config.state_dir + "/jobs");
  if (!largest_job_dir.ok()) return largest_job_dir.status();
  auto store = store::JobStore::Open(config.state_dir + "/pinpoint.db",
                                     {.min_id_exclusive = *largest_job_dir});
  if (!store.ok()) return store.status();
  if (simulated) {
    // A simulated node's MIG layout is its preset at each start: the changes of earlier runs are
    // made again, so `pinpoint gpus` and the change history agree.
    auto replayed = ReplayMigChanges(backend, **store);
    if (!replayed.ok()) return replayed.status();
    if (*replayed > 0)
      log::Info("simulated node: {} MIG layout change(s) of earlier runs made again", *replayed);
  }
  return store;
}

// Probes cgroup v2 where the config asks for it and says what the jobs' host limits are.
void ProbeCgroups(const Config& config, launch::Cgroups& cgroups) {
  if (config.cgroups) {
    Status s = cgroups.Probe();
    if (s.ok())
      log::Info("host limits through cgroup v2 at {}", config.cgroup_root);
    else
      log::Warn("host CPU/memory limits are off: {}", s.message());
  } else {
    log::Info("host CPU/memory limits are off (cgroups: false)");
  }
  if (!cgroups.enabled())
    log::Warn(
        "jobs have no cgroup of their own: a job's process that leaves its session is found by its "
        "uid "
        "and its job's key (PINPOINT_JOB_KEY), so one that also clears its environment can outlive "
        "its job "
        "(docs/security.md, item 3)");
}

// The metrics endpoint where the config names one; null when none, or when it could not start
// (enforcement does not depend on it: the daemon runs without it, loudly).
std::unique_ptr<metrics::MetricsServer> StartMetrics(const Config& config) {
  if (config.metrics_listen.empty()) return nullptr;
  auto started = metrics::MetricsServer::Start(config.metrics_listen);
  if (!started.ok()) {
    log::Error("metrics endpoint off: {}", started.status().message());
    return nullptr;
  }
  log::Info("metrics: http://{}/metrics (port {})", config.metrics_listen, (*started)->port());
  return std::move(started).value();
}

// Tells whoever started the daemon (ready_fd, when >= 0) that it serves.
void SignalReady(int ready_fd) {
  if (ready_fd < 0) return;
  if (::write(ready_fd, "ready\n", 6) != 6) log::Warn("could not signal readiness");
  ::close(ready_fd);
}

// Retention of ended jobs, as the config sets it (said once in the log when on).
RetentionOptions RetentionOptionsFor(const Config& config) {
  RetentionOptions retention_options;
  retention_options.retention_ms = config.retention_days * 24 * 3600 * 1000;
  retention_options.jobs_dir = config.state_dir + "/jobs";
  retention_options.user_stored_bytes = config.max_user_stored_bytes;
  if (config.retention_days > 0)
    log::Info("retention: jobs that ended more than {} days ago are purged with their directories",
              config.retention_days);
  return retention_options;
}

// What RunDaemon set up for the node; each lives in RunDaemon's frame while ServeNode runs.
struct DaemonParts {
  gpu::GpuBackend& backend;
  bool simulated;
  store::JobStore& store;
  const sched::Inventory& inventory;
  MigDynamic* mig;  // null when no GPU is in mig-dynamic mode
  sharing::Backends& sharing;
  sharing::Backend& mps;
  launch::Cgroups& cgroups;
  launch::ProcessLauncher& launcher;
  UserDirectory& users;
  RealClock& clock;
  int lock_fd;  // the state directory's lock, closed at the end
};

// The node's options on this machine: the config's, this node's Slurm facts, and on a simulated
// node its stand-in device nodes; its MPS servers are prestarted on the way.
Result<NodeOptions> NodeOptionsOfThisNode(const Config& config, const DaemonParts& parts) {
  NodeOptions options = NodeOptionsFor(config, parts.inventory, parts.backend);
  options.identity.slurm = SlurmFactsOfThisNode();
  if (Status s = PrestartMps(config, parts.inventory, parts.mps, parts.users); !s.ok()) return s;
  if (parts.simulated) {
    // Containers on a simulated node get stand-in device nodes and may declare device memory.
    options.identity.device_dir = SimulatedDeviceDir(config.state_dir, parts.inventory);
    options.identity.simulated_node = config.state_dir;
    parts.backend.SetDeclaredUsageFromProc(true, options.identity.simulated_node);
  }
  return options;
}

// The API server on the config's socket, its replies sent through `service`.
Result<std::unique_ptr<api::Server>> ListenApi(const Config& config, Service& service,
                                               Clock* clock) {
  auto server = api::Server::Listen(config.socket_path, &service, ServerOptionsFor(config, clock));
  if (!server.ok()) return server.status();
  service.set_reply_sink([server = server->get()](api::ConnId conn, const nlohmann::json& reply) {
    server->Reply(conn, reply);
  });
  log::Info("listening on {}; state in {}", config.socket_path, config.state_dir);
  return server;
}

// The node's life once its parts are set up: the node and its watcher, the metrics endpoint,
// the API server, and the main loop until a signal ends it. Returns the exit code.
int ServeNode(const Config& config, const DaemonParts& parts, int ready_fd) {
  auto options = NodeOptionsOfThisNode(config, parts);
  if (!options.ok()) return Fail(options.status());
  watch::WatcherOptions watch_options = WatcherOptionsFor(config, parts.inventory);
  // MPS servers run as their user and hold GPU memory, but are no job's leftover.
  watch::ProcProcessOwner owner(mps::MpsDaemons::ServerProgram(config.mps_control));
  // From here on only the watcher's thread uses the backend.
  watch::Watcher watcher(watch_options, &parts.backend, &owner, &parts.clock);
  launch::SystemContainerCgroups containers;
  cdi::SpecDir lease_specs(config.cdi_dir);
  launch::DiskOutputSpace output_space(config.state_dir);
  // Beside pinpoint-shim (the package's libexec); a checkpoint of 40 GiB took 23 s on an H100.
  CommandCheckpointer checkpointer(CompanionPath("pinpoint-checkpoint"), kCheckpointTimeoutMs);
  if (Status can = checkpointer.Available(); !can.ok()) log::Info("{}", can.message());
  Node node(*options, NodeDeps{.store = &parts.store,
                               .launcher = &parts.launcher,
                               .cgroups = &parts.cgroups,
                               .watcher = &watcher,
                               .clock = &parts.clock,
                               .users = &parts.users,
                               .containers = &containers,
                               .lease_specs = config.cdi_dir.empty() ? nullptr : &lease_specs,
                               .sharing = &parts.sharing,
                               .mig = parts.mig,
                               .output_space = &output_space,
                               .checkpointer = &checkpointer,
                               .host_mem_available = ReadMemAvailable});
  Status recovered = node.Recover();
  if (!recovered.ok()) return Fail(recovered);
  node.Step();  // tells the watcher of the adopted jobs before its first poll
  Status watching = watcher.Start();
  if (!watching.ok()) return Fail(watching);
  log::Info(
      "watcher: polling {} GPU(s) every {} ms; slices stopped above their memory +{}% for {} ms",
      watch_options.gpu_indices.size(), config.watch_interval_ms, config.gpu_mem_tolerance_pct,
      config.gpu_mem_grace_ms);
  std::unique_ptr<metrics::MetricsServer> metrics_server = StartMetrics(config);

  sigset_t mask = DaemonSignals();
  int sig_fd = ::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sig_fd < 0) return Fail(IoError("signalfd: " + ErrnoText(errno)));

  Service service(&node);
  if (metrics_server) service.set_metrics_port(metrics_server->port());
  auto server = ListenApi(config, service, &parts.clock);
  if (!server.ok()) return Fail(server.status());
  SignalReady(ready_fd);

  Retention retention(RetentionOptionsFor(config), &parts.store, &parts.clock);

  RunLoop(Loop{.store = parts.store,
               .node = node,
               .service = service,
               .server = **server,
               .watcher = watcher,
               .retention = retention,
               .metrics = metrics_server.get(),
               .clock = parts.clock,
               .sig_fd = sig_fd,
               .poll_interval_ms = config.poll_interval_ms});
  metrics_server.reset();
  watcher.Stop();
  log::Info("stopping; {} active jobs keep running and are re-adopted at the next start",
            node.active_count());
  ::close(sig_fd);
  ::close(parts.lock_fd);
  return 0;
}

}  // namespace

sigset_t DaemonSignals() {
  sigset_t mask;
  sigemptyset(&mask);
  for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&mask, sig);
  return mask;
}

void BlockDaemonSignals() {
  sigset_t mask = DaemonSignals();
  ::pthread_sigmask(SIG_BLOCK, &mask, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

int RunDaemon(const Config& config, std::unique_ptr<gpu::GpuBackend> backend,
              const std::string& backend_note, int ready_fd) {
  // "auto" that fell back to a simulated node is said loudly: nobody may take it for a GPU node.
  bool simulated = backend->source() == gpu::GpuBackend::Source::kSimulated;
  bool simulated_fallback = config.backend == "auto" && simulated;
  log::Log(simulated_fallback ? log::Level::kWarn : log::Level::kInfo, "pinpointd {} starting; {}",
           VersionText(), backend_note);
  BlockDaemonSignals();  // before the watcher's and the metrics server's threads start
  if (!config.system_cpus.empty() && JobCpus(config).cpus.empty())
    return Fail(InvalidArgument("config: \"system_cpus\" (" + FormatCpuList(config.system_cpus) +
                                ") leaves no online CPU for jobs"));
  if (Status s = MakeDaemonDirs(config); !s.ok()) return Fail(s);
  auto lock = LockStateDir(config.state_dir);
  if (!lock.ok()) return Fail(lock.status());

  auto store = OpenJobStore(config, *backend, simulated);
  if (!store.ok()) return Fail(store.status());
  auto gpus = backend->Inventory();
  if (!gpus.ok()) return Fail(gpus.status());
  auto mig_profiles = MigDynamicProfiles(*backend, *gpus, config);
  if (!mig_profiles.ok()) return Fail(mig_profiles.status());
  auto inventory = BuildInventory(*gpus, config, *mig_profiles);
  if (!inventory.ok()) return Fail(inventory.status());
  LogInventory(*inventory);

  RealClock clock;
  // GPUs in mig-dynamic mode: their layout as it is, resumed (nothing that exists is made again).
  auto mig = StartMigDynamic(*backend, *gpus, *mig_profiles, config, store->get(), *inventory,
                             clock.NowMs());
  if (!mig.ok()) return Fail(mig.status());

  launch::Cgroups cgroups(config.cgroup_root);
  ProbeCgroups(config, cgroups);
  std::string shim = ShimPath(config);
  if (::access(shim.c_str(), X_OK) != 0)
    return Fail(FailedPrecondition("job supervisor " + shim +
                                   " is missing or not executable (set shim_path)"));
  launch::ProcessLauncher launcher(shim);
  SystemUserDirectory system_users;
  CachingUserDirectory users(&system_users, &clock);
  auto mps_plan = PlanMps(
      config, {backend->source(), backend->Kind(), mps::MpsDaemons::Unusable(config.mps_control)});
  if (!mps_plan.ok()) return Fail(mps_plan.status());
  auto mps = MakeMps(config, *mps_plan, &clock);
  if (!mps.ok()) return Fail(mps.status());
  // The sharing modes this daemon runs; each device's placement rules come from its mode's backend.
  std::unique_ptr<sharing::Backends> sharing = MakeBackends(SharingSetup{.mps = mps->get()});

  return ServeNode(config,
                   DaemonParts{.backend = *backend,
                               .simulated = simulated,
                               .store = **store,
                               .inventory = *inventory,
                               .mig = mig->mig.get(),
                               .sharing = *sharing,
                               .mps = **mps,
                               .cgroups = cgroups,
                               .launcher = launcher,
                               .users = users,
                               .clock = clock,
                               .lock_fd = *lock},
                   ready_fd);
}

}  // namespace pinpoint::daemon
