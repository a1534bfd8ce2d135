// Fuzzes the daemon's request handling end to end: each input is one connection's session of
// request lines, each parsed by api::ParseRequest and answered by the daemon's Service, as
// src/api/server.cc does, on a simulated node with a real job store (SQLite) and a fake launcher,
// MPS control and clock. Nothing is ever started: jobs "run" in the FakeLauncher.
//
// Input: the first byte picks the caller (bits 0-1: root, this process's uid, or two other uids,
// one of them with no passwd entry) and the node (bit 2: h100x2 with GPU 1 exclusive, or
// a100x8-mig). The rest is newline-separated lines; a line is a request, or one of these
// stand-ins for the world outside the socket:
//   #end     every running job exits 0        #fail     every running job exits 1
//   #tick    a minute passes                  #fault    MPS reports a fatal fault on device 0
//   #restart the daemon restarts on the same store (its connection and waiters are gone)
// Every running job prints each line to its stdout and stderr (any bytes: logs replies must
// survive invalid UTF-8).
//
// A crash is: an exception out of Handle, a sanitizer report, a reply (direct or deferred) that is
// not one line holding a JSON object with a boolean "ok", an "internal" error (an exception the
// Service caught: a bug), a job that root's cancel cannot end, or a deferred reply that is never
// sent although its job ended. Every input starts from an empty store, so a crash replays alone.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/caller.h"
#include "api/protocol.h"
#include "common/clock.h"
#include "common/log.h"
#include "daemon/node/node.h"
#include "daemon/service/service.h"
#include "daemon/setup/config.h"
#include "daemon/setup/inventory_builder.h"
#include "daemon/setup/sharing_setup.h"
#include "gpu/simulated_backend.h"
#include "launch/fake_launcher.h"
#include "mps/fake_mps.h"
#include "pinpoint/api_codec.h"
#include "pinpoint/client.h"
#include "store/job_store.h"

namespace pinpoint {
namespace {

using nlohmann::json;

[[noreturn]] void Fail(const std::string& why, const std::string& detail = "") {
  std::fprintf(stderr, "service_fuzz: %s\n%s\n", why.c_str(), detail.substr(0, 4096).c_str());
  __builtin_trap();
}

// A scratch directory for the fuzzer's process, on tmpfs when there is one (the store fsyncs).
const std::string& ScratchDir() {
  struct Dir {
    std::string path;
    Dir() {
      for (std::string pattern : {"/dev/shm/pp-fuzz-XXXXXX", "/tmp/pp-fuzz-XXXXXX"}) {
        if (::mkdtemp(pattern.data()) != nullptr) {
          path = pattern;
          return;
        }
      }
      Fail("cannot create a scratch directory");
    }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static Dir dir;
  return dir.path;
}

// An empty store, created once: each input's store is a copy of it, opened by JobStore::Open as a
// daemon's start opens an existing store. Creating the schema afresh was a fifth of each run.
const std::string& EmptyStore() {
  static const std::string path = [] {
    std::string dir = ScratchDir() + "/empty";
    if (::mkdir(dir.c_str(), 0755) != 0) Fail("cannot create " + dir);
    std::string file = dir + "/pinpoint.db";
    auto store = store::JobStore::Open(file);
    if (!store.ok()) Fail("store", store.status().ToString());
    return file;  // the store closes here, its journal folded into the file
  }();
  return path;
}

// The simulated nodes' inventories, built once (the backend and the builder are not under test).
const sched::Inventory& NodeInventory(int which) {
  static const std::vector<sched::Inventory> inventories = [] {
    std::vector<sched::Inventory> out;
    for (const char* preset : {"h100x2", "a100x8-mig"}) {
      auto backend = gpu::SimulatedBackend::FromPreset(preset);
      if (!backend.ok()) Fail("preset", backend.status().message());
      auto gpus = (*backend)->Inventory();
      if (!gpus.ok()) Fail("inventory", gpus.status().message());
      daemon::Config config;
      config.host_cpus = 64;
      config.host_mem_bytes = 256ull << 30;
      if (std::string(preset) == "h100x2")
        config.gpu_modes["1"] = daemon::GpuMode::Shared(SharingMode::kExclusive);
      auto inv = daemon::BuildInventory(*gpus, config);
      if (!inv.ok()) Fail("inventory", inv.status().message());
      inv->host.cpus = config.host_cpus;  // not this machine's: inputs replay anywhere
      inv->host.mem_bytes = config.host_mem_bytes;
      out.push_back(*inv);
    }
    return out;
  }();
  return inventories.at(static_cast<size_t>(which) % inventories.size());
}

api::Caller CallerFor(uint8_t byte) {
  api::Caller c;
  switch (byte & 3) {
    case 0:
      c.uid = 0;
      c.gid = 0;
      break;
    case 1:
      c.uid = ::getuid();
      c.gid = ::getgid();
      break;
    case 2:
      c.uid = 65534;
      c.gid = 65534;
      break;  // nobody, where it exists
    default:
      c.uid = 4242;
      c.gid = 4242;
      break;  // no passwd entry
  }
  c.pid = 4321;
  return c;
}

// Whether a client reads `line`, an "ok" reply to `op`, as pinpoint::Client does (api_codec.h).
Status ClientReads(const std::string& op, const std::string& line) {
  auto object = ParseReplyLine(line);
  if (!object.ok()) return object.status();
  if (op == "version") return DecodeReply<VersionRequest>(*object).status();
  if (op == "submit") return DecodeReply<SubmitRequest>(*object).status();
  if (op == "wait") return DecodeReply<WaitRequest>(*object).status();
  if (op == "queue") return DecodeReply<QueueRequest>(*object).status();
  if (op == "show") return DecodeReply<ShowRequest>(*object).status();
  if (op == "cancel") return DecodeReply<CancelRequest>(*object).status();
  if (op == "gpus") return DecodeReply<GpusRequest>(*object).status();
  if (op == "logs") return DecodeReply<LogsRequest>(*object).status();
  if (op == "qos") return DecodeReply<QosRequest>(*object).status();
  if (op == "hold") return DecodeReply<HoldRequest>(*object).status();
  if (op == "release") return DecodeReply<ReleaseRequest>(*object).status();
  if (op == "update") return DecodeReply<UpdateRequest>(*object).status();
  if (op == "update_array") return DecodeReply<UpdateArrayRequest>(*object).status();
  if (op == "suspend") return DecodeReply<SuspendRequest>(*object).status();
  if (op == "resume") return DecodeReply<ResumeRequest>(*object).status();
  if (op == "open_lease") return DecodeReply<OpenLeaseRequest>(*object).status();
  if (op == "attach_lease") return DecodeReply<AttachLeaseRequest>(*object).status();
  if (op == "close_lease") return DecodeReply<CloseLeaseRequest>(*object).status();
  return Internal("no op " + op);
}

// What the server would write for `reply` (src/api/server.cc), checked: one line holding an
// object with a boolean "ok", and an error code that is not "internal"; an "ok" reply to `op`
// is one the client reads.
void CheckReply(const json& reply, const std::string& op) {
  std::string line = reply.dump(-1, ' ', false, json::error_handler_t::replace);
  if (line.find('\n') != std::string::npos) Fail("a reply spans lines", line);
  if (!reply.is_object() || !reply.contains("ok") || !reply["ok"].is_boolean())
    Fail("a reply is not an object with a boolean \"ok\"", line);
  if (reply["ok"].get<bool>()) {
    Status read = ClientReads(op, line);
    if (!read.ok()) Fail("the client cannot read the reply to " + op + ": " + read.message(), line);
    return;
  }
  const json& error = reply.value("error", json());
  if (!error.is_object() || !error.contains("code") || !error["code"].is_string())
    Fail("an error reply has no code", line);
  if (error["code"] == "internal") Fail("the Service caught an exception", line);
}

constexpr api::ConnId kConn = 7;

// One daemon on one simulated node, from an empty store.
class Daemon {
 public:
  explicit Daemon(const sched::Inventory& inventory) : dir_(ScratchDir() + "/state") {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    if (::mkdir(dir_.c_str(), 0755) != 0 || ::mkdir((dir_ + "/jobs").c_str(), 0755) != 0)
      Fail("cannot create " + dir_);
    std::error_code copied;
    std::filesystem::copy_file(EmptyStore(), dir_ + "/pinpoint.db", copied);
    if (copied) Fail("cannot copy the empty store: " + copied.message());
    auto store = store::JobStore::Open(dir_ + "/pinpoint.db");
    if (!store.ok()) Fail("store", store.status().ToString());
    store_ = std::move(store).value();
    options_.identity.state_dir = dir_;
    options_.inventory = inventory;
    options_.identity.backend_kind = "simulated:fuzz";
    options_.identity.simulated = true;
    options_.identity.driver_version = "simulated";
    options_.launch.cancel_grace_ms = 5000;
    // A root daemon: nothing runs, so every user's job may "start".
    options_.identity.daemon_uid = 0;
    Start();
  }
  ~Daemon() {
    service_.reset();
    node_.reset();
    store_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  // Serves one line as the server does, then one pass of the main loop.
  void Serve(const api::Caller& caller, std::string_view line) {
    if (!Directive(line)) {
      auto request = api::ParseRequest(line);
      std::optional<json> reply;
      if (!request.ok()) {
        reply = api::ErrorReply(request.status());
      } else {
        try {
          reply = service_->Handle(caller, *request, kConn);
        } catch (...) {
          Fail("an exception escaped Service::Handle", std::string(line));
        }
        if (!reply) ++deferred_;
      }
      if (reply) CheckReply(*reply, request.ok() ? (*request)["op"].get<std::string>() : "");
    }
    Pass(line);
  }

  // Ends every job as root would (cancel, then the grace period), answers the waiters, and
  // closes the connection. Every deferred reply must have been sent by then.
  void Drain() {
    api::Caller root;
    for (int round = 0; round < 8 && node_->active_count() > 0; ++round) {
      auto active = node_->List(false, std::nullopt, 0, kQueueMaxLimit);
      if (!active.ok()) Fail("list", active.status().ToString());
      std::vector<JobId> ids;
      for (const auto& job : active->jobs) ids.push_back(job.id);
      if (!ids.empty()) (void)node_->Cancel(root, ids);
      clock_.AdvanceMs(options_.launch.cancel_grace_ms + 1);
      Pass("");
    }
    if (node_->active_count() > 0) Fail("root's cancel does not end every job");
    if (answered_ != deferred_)
      Fail("a deferred reply was never sent: " + std::to_string(deferred_ - answered_) + " of " +
           std::to_string(deferred_));
    service_->Closed(kConn);
  }

 private:
  void Start() {
    node_ =
        std::make_unique<daemon::Node>(options_, daemon::NodeDeps{.store = store_.get(),
                                                                  .launcher = &launcher_,
                                                                  .clock = &clock_,
                                                                  .sharing = mps_backends_.get()});
    Status recovered = node_->Recover();
    if (!recovered.ok()) Fail("recover", recovered.ToString());
    service_ = std::make_unique<daemon::Service>(node_.get());
    service_->set_reply_sink([this](api::ConnId conn, const json& reply) {
      if (conn != kConn) Fail("a deferred reply went to connection " + std::to_string(conn));
      CheckReply(reply, "wait");  // a deferred reply: wait's, or submit's with wait, the same form
      ++answered_;
    });
    deferred_ = answered_ = 0;
  }

  bool Directive(std::string_view line) {
    if (line == "#end")
      launcher_.FinishAll(0);
    else if (line == "#fail")
      launcher_.FinishAll(1);
    else if (line == "#tick")
      clock_.AdvanceMs(60'000);
    else if (line == "#fault")
      mps_.InjectFault(0);
    else if (line == "#restart") {
      service_->Closed(kConn);  // the connection died with the daemon
      service_.reset();
      node_.reset();
      Start();
    } else {
      return false;
    }
    return true;
  }

  // One pass of pinpointd's main loop; then every running job prints `output`.
  void Pass(std::string_view output) {
    clock_.AdvanceMs(100);
    service_->JobsEnded(node_->Step());
    for (JobId id : launcher_.Running()) {
      std::string job_dir = dir_ + "/jobs/" + std::to_string(id);
      ::mkdir(job_dir.c_str(), 0755);
      for (const char* stream : {"/stdout", "/stderr"}) {
        std::ofstream out(job_dir + stream, std::ios::binary | std::ios::app);
        out << output << '\n';
      }
    }
  }

  std::string dir_;
  daemon::NodeOptions options_;
  std::unique_ptr<store::JobStore> store_;
  launch::FakeLauncher launcher_;
  mps::FakeMps mps_;
  std::unique_ptr<sharing::Backends> mps_backends_ =
      daemon::MakeBackends(daemon::SharingSetup{.mps = &mps_});
  FakeClock clock_;
  std::unique_ptr<daemon::Node> node_;
  std::unique_ptr<daemon::Service> service_;
  int64_t deferred_ = 0;
  int64_t answered_ = 0;
};

}  // namespace
}  // namespace pinpoint

// Runs before libFuzzer reads its flags, and may change them (libFuzzer's documented contract).
// Entropic scheduling costs time per feature of each run; a run of this target touches tens of
// thousands, so it is off by default here (an explicit -entropic=1 on the command line wins:
// the last flag counts).
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  static std::vector<char*> args;
  static char entropic_off[] = "-entropic=0";
  args.assign(*argv, *argv + *argc);
  args.insert(args.begin() + 1, entropic_off);
  args.push_back(nullptr);
  *argc = static_cast<int>(args.size()) - 1;
  *argv = args.data();
  pinpoint::log::SetLevel("off");  // the node logs every job start and end
  (void)pinpoint::ScratchDir();
  (void)pinpoint::EmptyStore();
  (void)pinpoint::NodeInventory(0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const pinpoint::api::Caller caller = pinpoint::CallerFor(data[0]);
  pinpoint::Daemon daemon(pinpoint::NodeInventory((data[0] >> 2) & 1));
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  while (!rest.empty()) {
    size_t newline = rest.find('\n');
    std::string_view line = rest.substr(0, newline);
    rest = newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
    daemon.Serve(caller, line);
  }
  daemon.Drain();
  return 0;
}
