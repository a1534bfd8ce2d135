// For tests only: a Service on a Node of fakes (launcher, MPS control, clock) over a job store in
// a fresh directory, and the fake devices node tests use.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cdi/fake_lease_specs.h"
#include "common/test_dir.h"
#include "daemon/node/node.h"
#include "daemon/service/service.h"
#include "daemon/setup/sharing_setup.h"
#include "launch/container_cgroups.h"
#include "launch/fake_launcher.h"
#include "mps/fake_mps.h"

namespace pinpoint::daemon {

// Two devices "GPU-0" and "GPU-1" ("Fake GPU", 80 GiB, 132 SMs) in `mode`, on a host of 64 CPUs
// and 256 GiB.
inline sched::Inventory TwoGpus(SharingMode mode = SharingMode::kMps) {
  sched::Inventory inv;
  for (int i = 0; i < 2; ++i) {
    sched::Device d;
    d.index = i;
    d.gpu_index = i;
    d.uuid = "GPU-" + std::to_string(i);
    d.name = "Fake GPU";
    d.mem_bytes = 80ull << 30;
    d.sm_count = 132;
    d.mode = mode;
    inv.devices.push_back(d);
  }
  inv.host.cpus = 64;
  inv.host.mem_bytes = 256ull << 30;
  return inv;
}

// The environment of the `launch`th job `launcher` launched, by name.
inline std::map<std::string, std::string> LaunchEnv(const launch::FakeLauncher& launcher,
                                                    size_t launch) {
  std::map<std::string, std::string> env;
  for (const auto& kv : launcher.launches().at(launch).env) {
    auto eq = kv.find('=');
    env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

// A 1 GiB slice of one GPU running `python3 task.py` in `cwd`: the job most node tests submit.
inline JobRequest GpuSlice(const std::string& cwd = "/") {
  JobRequest r;
  r.argv = {"python3", "task.py"};
  r.cwd = cwd;
  r.gpus = 1;
  r.gpu_mem_bytes = 1ull << 30;
  return r;
}

// The caller is uid 4242 (not the test's uid, whoever runs it, and with no passwd entry: its
// jobs' user is "uid 4242" on any machine); the daemon acts as root.
class ServiceFixture : public ::testing::Test {
 protected:
  ServiceFixture() {
    caller_.uid = 4242;
    caller_.gid = 4242;
  }
  // The store closes here, before any member of a derived fixture is destroyed: a fixture that
  // adds a store::testing::FaultyVfs keeps it until the store's last checkpoint and sync.
  void TearDown() override {
    service_.reset();
    node_.reset();
    store_.reset();
  }
  // A new Node and store on `options` over the same state directory, as after a daemon restart.
  // `users`: the user directory (not owned); null: the system's.
  void Restart(NodeOptions options, UserDirectory* users = nullptr) {
    service_.reset();
    node_.reset();
    store_.reset();
    store_ = std::move(store::JobStore::Open(dir_.path() + "/pinpoint.db")).value();
    options.identity.state_dir = dir_.path();
    options.identity.daemon_uid = 0;
    node_ = std::make_unique<Node>(options, NodeDeps{.store = store_.get(),
                                                     .launcher = &launcher_,
                                                     .clock = &clock_,
                                                     .users = users,
                                                     .containers = &containers_,
                                                     .lease_specs = &lease_specs_,
                                                     .sharing = mps_backends_.get()});
    ASSERT_TRUE(node_->Recover().ok());
    service_ = std::make_unique<Service>(node_.get());
  }
  // Restart on `inventory` with the other options at their defaults.
  void RestartOn(sched::Inventory inventory) {
    NodeOptions options;
    options.inventory = std::move(inventory);
    Restart(options);
  }
  // Keeps the deferred replies the service sends from now on in replies_.
  void CollectReplies() {
    service_->set_reply_sink([this](api::ConnId conn, const nlohmann::json& reply) {
      replies_.emplace_back(conn, reply);
    });
  }

  TestDir dir_;
  api::Caller caller_;
  launch::FakeLauncher launcher_;
  mps::FakeMps mps_;
  std::unique_ptr<sharing::Backends> mps_backends_ = MakeBackends(SharingSetup{.mps = &mps_});
  launch::FakeContainerCgroups containers_;
  cdi::FakeLeaseSpecs lease_specs_;
  FakeClock clock_;
  std::unique_ptr<store::JobStore> store_;
  std::unique_ptr<Node> node_;
  std::unique_ptr<Service> service_;
  std::vector<std::pair<api::ConnId, nlohmann::json>>
      replies_;  // with CollectReplies: connection, reply
};

}  // namespace pinpoint::daemon
