// NodeTest: a Node on two fake GPUs (MPS) with a fake launcher, fake MPS and a fake clock, and a
// store in a fresh directory; what node_test.cc and node_faults_test.cc share.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "common/test_dir.h"
#include "daemon/node/node.h"
#include "daemon/service/service_fixture.h"
#include "daemon/setup/sharing_setup.h"
#include "launch/fake_launcher.h"
#include "mps/fake_mps.h"

namespace pinpoint::daemon {

using launch::ExitStatus;

class NodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OpenStore();
    MakeNode(TwoGpus());
    caller_.uid = ::getuid();
    caller_.gid = ::getgid();
  }
  void TearDown() override {
    node_.reset();
    store_.reset();
  }
  void OpenStore() {
    auto s = store::JobStore::Open(dir_ + "/pinpoint.db");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
  }
  void MakeNode(sched::Inventory inv, std::vector<ServiceClass> qos = DefaultServiceClasses()) {
    NodeOptions o;
    o.identity.state_dir = dir_;
    o.inventory = std::move(inv);
    o.admission.qos = std::move(qos);
    o.identity.backend_kind = "simulated:test";
    o.identity.simulated = true;
    o.launch.cancel_grace_ms = 5000;
    o.identity.daemon_uid = ::getuid();
    node_ = std::make_unique<Node>(
        o, NodeDeps{.store = store_.get(),
                    .launcher = &launcher_,
                    .clock = &clock_,
                    .sharing = sharing_ != nullptr ? sharing_ : mps_backends_.get(),
                    .checkpointer = checkpointer_});
  }
  JobRequest Request(int gpus, uint64_t gpu_mem = 0, int share = 0) {
    JobRequest r;
    r.argv = {"train"};
    r.cwd = "/";
    r.env = {{"PATH", "/bin"}, {"CUDA_MPS_PIPE_DIRECTORY", "/user/chose/this"}};
    r.gpus = gpus;
    r.gpu_mem_bytes = gpu_mem;
    r.gpu_share_pct = share;
    return r;
  }
  JobId Submit(JobRequest r) {
    auto job = node_->Submit(caller_, std::move(r));
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->id : 0;
  }
  JobState StateOf(JobId id) { return node_->Get(id)->state; }
  std::map<std::string, std::string> EnvOf(size_t launch) { return LaunchEnv(launcher_, launch); }
  // A daemon started again on this test's store and state directory, finding its jobs'
  // supervisors in `launcher` (what a restarted pinpointd finds); Recover is the caller's.
  std::unique_ptr<Node> RestartedOn(launch::FakeLauncher& launcher) {
    NodeOptions o;
    o.identity.state_dir = dir_;
    o.inventory = TwoGpus();
    o.identity.daemon_uid = ::getuid();
    return std::make_unique<Node>(o, NodeDeps{.store = store_.get(),
                                              .launcher = &launcher,
                                              .clock = &clock_,
                                              .sharing = mps_backends_.get(),
                                              .checkpointer = checkpointer_});
  }
  // A job gone without an exit status: lost (its node went down, or its supervisor vanished).
  static ExitStatus NoStatus() {
    ExitStatus s;
    s.kind = ExitStatus::Kind::kNoStatus;
    return s;
  }
  // A job ended by SIGTERM (a cancel's or a preemption's stop).
  static ExitStatus Terminated() {
    ExitStatus s;
    s.kind = ExitStatus::Kind::kSignaled;
    s.term_signal = SIGTERM;
    return s;
  }
  static ExitStatus Exited(int code) {
    ExitStatus s;
    s.kind = ExitStatus::Kind::kExited;
    s.exit_code = code;
    return s;
  }

  TestDir tmp_;
  const std::string dir_ = tmp_.path();
  std::unique_ptr<store::JobStore> store_;
  launch::FakeLauncher launcher_;
  mps::FakeMps mps_;
  std::unique_ptr<sharing::Backends> mps_backends_ = MakeBackends(SharingSetup{.mps = &mps_});
  FakeClock clock_;
  sharing::Backends* sharing_ = nullptr;  // null: the node's standard backends over mps_
  Checkpointer* checkpointer_ = nullptr;  // null: the node suspends nothing
  std::unique_ptr<Node> node_;
  api::Caller caller_;
};

// Whether `l` sent `sig` to job `id`.
inline bool Signalled(const launch::FakeLauncher& l, JobId id, int sig) {
  for (const auto& [job, s] : l.signals())
    if (job == id && s == sig) return true;
  return false;
}

}  // namespace pinpoint::daemon
