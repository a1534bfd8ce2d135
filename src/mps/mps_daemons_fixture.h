// MpsDaemonsTest: MpsDaemons over a stand-in control binary (tests/fake_mps) in a fresh MPS root,
// with a fake clock and helpers that wait for its events without sleeping; shared by the
// MpsDaemons test files.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/file_util.h"
#include "common/test_dir.h"
#include "mps/mps_daemons.h"

namespace pinpoint::mps {

class MpsDaemonsTest : public ::testing::Test {
 protected:
  void SetUp() override { mps_ = std::make_unique<MpsDaemons>(Options(), &clock_); }
  // The options of a daemon over this test's MPS root and the stand-in control binary.
  MpsDaemonsOptions Options(int command_timeout_ms = 10000) const {
    MpsDaemonsOptions o;
    o.mps_root = root_;
    o.control_binary = PINPOINT_SOURCE_DIR "/tests/fake_mps/nvidia-cuda-mps-control";
    o.idle_quit_ms = 60000;
    o.command_timeout_ms = command_timeout_ms;
    o.probe_interval_ms = 0;  // probes only where a test asks for them (they add commands)
    return o;
  }
  void TearDown() override { mps_->QuitAll(); }
  sharing::Slice Slice(int device, uint32_t uid) {
    sharing::Slice s;
    s.device_index = device;
    s.device_uuid = "GPU-" + std::to_string(device);
    s.uid = uid;
    s.gid = uid;
    s.gpu_mem_bytes = 2ull << 30;
    return s;
  }
  std::string Pipe(int device, uint32_t uid) {
    return root_ + "/dev" + std::to_string(device) + "/" + std::to_string(uid) + "/pipe";
  }
  std::string Commands(int device, uint32_t uid) {
    auto t = ReadFile(Pipe(device, uid) + "/fake_commands");
    return t.ok() ? *t : "";
  }
  static bool Alive(int64_t pid) {
    if (::kill(static_cast<pid_t>(pid), 0) != 0) return false;
    auto stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
    return stat.ok() && stat->find(") Z") == std::string::npos;
  }
  // The daemon of `device` as Servers reports it; a default one (device -1) when there is none.
  static sharing::ServerInfo Info(const MpsDaemons& mps, int device) {
    for (const auto& [index, d] : mps.Servers())
      if (index == device) return d;
    sharing::ServerInfo none;
    none.device_index = -1;
    return none;
  }
  // Slice(device, uid) of job `job_id` (a safe cancel is keyed by its job).
  sharing::Slice JobSlice(int device, uint32_t uid, uint64_t job_id) {
    sharing::Slice s = Slice(device, uid);
    s.job_id = job_id;
    return s;
  }
  int64_t ControlPid(int device) { return Info(*mps_, device).control_pid; }

  // What pinpointd's loop does: waits until one of WaitFds is readable (no sleep), then Polls;
  // the events go to events_. False when nothing was in flight.
  bool Wait(MpsDaemons& mps, int timeout_ms = -1) {
    std::vector<pollfd> fds;
    for (int fd : mps.WaitFds()) fds.push_back({fd, POLLIN, 0});
    if (fds.empty()) return false;
    ::poll(fds.data(), fds.size(), timeout_ms);
    for (auto& e : mps.Poll(clock_.NowMs())) events_.push_back(e);
    return true;
  }
  // PrepareClient asked again, as the node does, while it waits for a start or a quit.
  // The events of its start and quits are not kept.
  Result<std::map<std::string, std::string>> Prepare(MpsDaemons& mps, const sharing::Slice& slice) {
    size_t events = events_.size();
    for (;;) {
      auto env = mps.Prepare(slice);
      bool waits = !env.ok() && env.status().code() == Code::kFailedPrecondition &&
                   env.status().message().find("serves uid") == std::string::npos;
      if (!waits || !Wait(mps)) {
        events_.resize(events);
        return env;
      }
    }
  }
  Result<std::map<std::string, std::string>> Prepare(const sharing::Slice& slice) {
    return Prepare(*mps_, slice);
  }
  // Polls as the loop does until `kind` has been reported.
  bool WaitFor(MpsDaemons& mps, sharing::Event::Kind kind) {
    for (;;) {
      for (const auto& e : events_)
        if (e.kind == kind) return true;
      if (!Wait(mps)) return false;
    }
  }

  TestDir tmp_;
  const std::string root_ = tmp_.path();
  FakeClock clock_;
  std::unique_ptr<MpsDaemons> mps_;
  std::vector<sharing::Event> events_;
};

}  // namespace pinpoint::mps
