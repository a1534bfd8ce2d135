#include "launch/process_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>

#include "common/file_util.h"
#include "common/log.h"
#include "common/process.h"
#include "common/spawn.h"
#include "launch/job_identity.h"
#include "launch/shim.h"

namespace pinpoint::launch {

namespace {

std::string Parent(const std::string& path) { return path.substr(0, path.rfind('/')); }

ExitStatus NeverLaunched(const std::string& why) {
  ExitStatus never;
  never.kind = ExitStatus::Kind::kNeverLaunched;
  never.error = why;
  return never;
}

// The processes an ended job left running that one Poll kills (the next polls kill the others).
constexpr size_t kKillsPerPoll = 256;
// How long an ended job waits for processes that could be its own caught inside an exec (their
// environment not readable yet) before it is over without them: an exec lasts microseconds to
// milliseconds; one still in an exec after this (stuck in a hung file system's read) does not
// hold the job's devices for ever.
constexpr int64_t kUnsureWaitMs = 10'000;

std::string RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  size_t got = 0;
  while (got < bytes) {
    ssize_t n = ::getrandom(raw.data() + got, bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : raw) {
    hex += kDigits[c >> 4];
    hex += kDigits[c & 15];
  }
  return hex;
}

// What the job directory says of its supervisor.
enum class Supervisor {
  kAlive,
  kGone,
  kNeverStarted,  // no lock: no supervisor was ever started
  kUnknown,       // a transient error (out of descriptors, say): ask again later
};

// Liveness from what only pinpointd can touch. The lock is created 0600 in a directory only
// pinpointd writes, so no user can open it, and so none can hold it to fake a live supervisor. A
// lock that others could open (made 0644 by an earlier version) is not trusted: the supervisor's
// pid and start time decide then.
Supervisor SupervisorOf(int dir_fd, const JobHandle& handle) {
  auto lock = OpenFileAt(dir_fd, kLockFile, O_RDWR);
  if (!lock.ok())
    return lock.status().code() == Code::kUnavailable ? Supervisor::kUnknown
                                                      : Supervisor::kNeverStarted;
  struct stat st {};
  if (::fstat(lock->get(), &st) != 0) return Supervisor::kUnknown;
  bool others_can_open = (st.st_mode & (S_IRWXG | S_IRWXO)) != 0 || st.st_uid != ::geteuid();
  if (others_can_open && handle.pid > 0 && handle.pid_start_ticks != 0) {
    auto stat = ReadProcStat(handle.pid);
    bool alive = stat && stat->state != 'Z' && stat->start_ticks == handle.pid_start_ticks;
    return alive ? Supervisor::kAlive : Supervisor::kGone;
  }
  if (::flock(lock->get(), LOCK_EX | LOCK_NB) == 0) return Supervisor::kGone;
  return errno == EWOULDBLOCK ? Supervisor::kAlive : Supervisor::kUnknown;
}

}  // namespace

// The job's members among the node's processes: what JobIdentity::Holds says of each, from one
// read of each process's stat (and, where asked, its cgroup and uids; its keys from keys_, each
// process's environment read once in its life). Each is verified again, freshly, before it is
// signalled (SignalIfBelongs).
//
// The node's processes come from scan_'s round, which every job of a pass shares and which may
// span passes (its budget): a "none" from a complete round is sound because a job's process comes
// only from another of its processes, and the round reads in pid order, seeing those started
// since above where it is (process_scan.h). A round is dropped after any answer that is not
// "none" (its processes are about to be signalled and looked for again), and after the pass it
// completed in.
std::vector<int64_t> ProcessLauncher::Members(const JobIdentity& id, int64_t launched, int* unsure,
                                              bool* partial) {
  std::vector<int64_t> out;
  if (partial != nullptr) *partial = false;
  if (id.session == 0 && id.cgroup_rel.empty() && id.key_entry.empty()) return out;
  // A job in a cgroup has its processes there, where none can leave: a job that left thousands
  // costs their pids, not the node's processes, and one that ended costs no look at the node.
  // Only a cgroup nothing ran in (a supervisor that could not join it) asks the node.
  if (!id.cgroup_dir.empty()) {
    out = CgroupMembers(id);
    if (!out.empty() || RanInCgroup(id)) return out;
  }
  bool complete = scan_.Advance();
  if (complete && retained_round_ != scan_.rounds()) {
    std::map<int64_t, uint64_t> alive;
    for (const ProcessScan::Entry& p : scan_.entries()) alive.emplace(p.pid, p.stat.start_ticks);
    keys_.Retain(alive);
    for (auto it = uids_.begin(); it != uids_.end();) {
      auto now = alive.find(it->first);
      it = now == alive.end() || now->second != it->second.first ? uids_.erase(it) : std::next(it);
    }
    retained_round_ = scan_.rounds();
    round_launches_ = launches_;
  }
  // A round that completed before this job was launched knows nothing of its processes: another
  // starts. (In the daemon's pass the ended jobs are polled before any launch, and a complete
  // round is dropped at the next pass: a signal to a job just launched is what meets this.)
  if (complete && launched > round_launches_) {
    scan_.Restart();
    return Members(id, launched, unsure, partial);
  }
  bool between = false;
  for (ProcessScan::Entry& p : scan_.entries()) {
    if (p.pid == id.session) continue;
    bool member = id.session > 0 && p.stat.session == id.session;
    if (!member && !id.cgroup_rel.empty()) {
      if (!p.cgroup) p.cgroup = CgroupOf(p.pid);
      member = *p.cgroup == id.cgroup_rel;
    }
    // By key: only a process whose /proc entry the job's user owns can be all theirs (a
    // set-user-id program's is root's), and only its ids are read.
    if (!member && !id.key_entry.empty() && p.owner == id.uid) {
      if (!p.uids && !KnownUids(p)) {
        if (unsure != nullptr) ++*unsure;  // not read in this pass: looked at again next pass
        continue;
      }
      if (*p.uids && (*p.uids)->AllAre(id.uid)) {
        ProcessKeys::Answer key = keys_.Check(p.pid, p.stat.start_ticks, id.uid, id.key_entry);
        member = key == ProcessKeys::Answer::kHolds;
        // Not read in this pass (its budget is spent): not known to be another's, looked at again
        // by the next pass, which follows at once (MoreDue).
        if (key == ProcessKeys::Answer::kNotRead && unsure != nullptr) ++*unsure;
        // Inside an exec (a job's `exec sleep`) its environment reads empty for a moment: not
        // known to be another's, looked at again later (Poll). Only one that could be the job's
        // counts: an orphan (the job's processes are orphaned to pid 1 when its shell ends) or
        // the child of one of the job's processes; the user's other processes starting programs
        // (their parents alive and not the job's) delay no job's end.
        if (key == ProcessKeys::Answer::kEmpty && unsure != nullptr &&
            ProcessBetweenPrograms(p.pid) &&
            (p.stat.ppid == 1 || id.Holds(p.stat.ppid, KnownKeyOf(id)))) {
          ++*unsure;
          between = true;
        }
      }
    }
    if (member) out.push_back(p.pid);
  }
  if (!complete) {
    // The round goes on in the next pass: what it found so far is the job's; "none" is not known.
    if (partial != nullptr) *partial = true;
    return out;
  }
  if (!out.empty() || between) {
    scan_.Restart();
  } else if (scan_.wrapped()) {
    // The pids wrapped around during the round: a process of the job may have been started below
    // where the round was, and missed. Not known to be none: another round looks (for at most
    // kUnsureWaitMs, as for a process inside an exec).
    if (unsure != nullptr) ++*unsure;
    scan_.Restart();
  }
  return out;
}

// A process's ids, read once in its life (kept by pid and start time), on the scan's budget: false
// when it is spent. Only ids that stay its user's are kept for later rounds: a process whose
// effective id changes is shown as root's in /proc (its owner, read afresh each round), and is
// read again when it is its user's once more.
bool ProcessLauncher::KnownUids(ProcessScan::Entry& p) {
  auto known = uids_.find(p.pid);
  if (known != uids_.end() && known->second.first == p.stat.start_ticks &&
      known->second.second.effective == p.owner) {
    p.uids = known->second.second;
    return true;
  }
  if (!scan_.Spend([&] { p.uids = ReadProcUids(p.pid); })) return false;
  if (*p.uids) uids_[p.pid] = {p.stat.start_ticks, **p.uids};
  return true;
}

int64_t ProcessLauncher::LaunchedSeq(const JobHandle& handle) const {
  auto it = launched_seq_.find(handle.job_dir);
  return it == launched_seq_.end() ? 0 : it->second;
}

JobIdentity::KnownKey ProcessLauncher::KnownKeyOf(const JobIdentity& id) const {
  return [this, &id](int64_t pid, uint64_t start_ticks) -> std::optional<bool> {
    switch (keys_.Known(pid, start_ticks, id.key_entry)) {
      case ProcessKeys::Answer::kHolds:
        return true;
      case ProcessKeys::Answer::kLacks:
        return false;
      default:
        return std::nullopt;
    }
  };
}

bool ProcessLauncher::Unsettled(JobId job, int unsure) {
  if (unsure == 0) return false;
  int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now().time_since_epoch())
                       .count();
  auto since = unsure_since_ms_.emplace(job, now_ms).first;
  return now_ms - since->second < kUnsureWaitMs;
}

ProcessLauncher::ProcessLauncher(std::string shim_path) : shim_path_(std::move(shim_path)) {}
ProcessLauncher::ProcessLauncher(std::string shim_path, ProcessKeys keys)
    : shim_path_(std::move(shim_path)), keys_(std::move(keys)) {}
ProcessLauncher::ProcessLauncher(std::string shim_path, ProcessKeys keys, ProcessScan scan)
    : shim_path_(std::move(shim_path)), keys_(std::move(keys)), scan_(std::move(scan)) {}

const SpecFacts& ProcessLauncher::FactsFor(const JobHandle& handle, int dir_fd) {
  auto known = facts_.find(handle.job_dir);
  if (known != facts_.end()) return known->second;
  // Launched by an earlier pinpointd: its spec is read once, here. One that does not read names
  // no key and no cgroup (the session alone), and is read again at the next call.
  auto spec = ReadSpec(dir_fd);
  if (!spec.ok()) {
    static const SpecFacts kNone;
    return kNone;
  }
  return facts_[handle.job_dir] = FactsOf(*spec);
}

uint64_t ProcessStartTicks(int64_t pid) {
  auto stat = ReadProcStat(pid);
  return stat ? stat->start_ticks : 0;
}

Result<JobHandle> ProcessLauncher::Launch(const LaunchSpec& spec) {
  PP_RETURN_IF_ERROR(MakeDirs(Parent(spec.job_dir), 0755));
  std::string name = "job " + std::to_string(spec.job_id);
  if (auto old = OpenDirNoFollow(spec.job_dir); old.ok()) {
    JobHandle earlier;  // the earlier run's pid is not known here: its lock alone decides
    Supervisor was = SupervisorOf(old->get(), earlier);
    if (was == Supervisor::kAlive) return IoError(name + " already has a live supervisor");
    if (was == Supervisor::kUnknown)
      return Unavailable(name + ": cannot tell whether an earlier supervisor lives");
  }
  // A fresh directory that only pinpointd can write: nothing a user (or an earlier run) left
  // there can be written through, chowned or mistaken for this run's status.
  std::string moved_to;
  PP_RETURN_IF_ERROR(MakeFreshDir(spec.job_dir, 0755, &moved_to));
  if (!moved_to.empty())
    log::Warn(
        "{}: {} already existed (an earlier run, or not made by pinpointd); moved it "
        "to {}",
        name, spec.job_dir, moved_to);
  auto dir = OpenJobDir(spec.job_dir);
  if (!dir.ok()) return dir.status();
  // The job's key (JobIdentity): stored in spec.json, which only pinpointd reads, and in the
  // job's environment, which only the job's user and root can read.
  LaunchSpec keyed = spec;
  keyed.env.push_back(kJobKeyPrefix + RandomHex(16));
  PP_RETURN_IF_ERROR(WriteSpec(dir->get(), keyed));
  PP_RETURN_IF_ERROR(CreateExitSlot(dir->get()));
  // Locked before fork and inherited by the shim: there is no moment at which the job lives
  // and its lock is free, so a daemon restarting at any time reads liveness correctly.
  // 0600: see SupervisorOf.
  auto lock = OpenFileAt(dir->get(), kLockFile, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (!lock.ok()) return lock.status();
  if (::flock(lock->get(), LOCK_EX | LOCK_NB) != 0)
    return IoError(name + " already has a live supervisor");
  // Started by posix_spawn, not fork: the daemon's pages are neither copied nor made
  // copy-on-write (with a large heap, a fork and the faults after it cost the loop ms per start).
  // The shim gets the lock as fd 3, the daemon's stdout and stderr (its log), and nothing else of
  // pinpointd's; it leads a session of its own, whose id is its pid.
  constexpr int kShimLockFd = 3;
  SpawnSpec shim;
  shim.argv = {shim_path_, spec.job_dir, std::to_string(kShimLockFd)};
  shim.out = SpawnStream::Fd(STDOUT_FILENO);
  shim.err = SpawnStream::Fd(STDERR_FILENO);
  shim.pass_fds = {{lock->get(), kShimLockFd}};
  shim.new_session = true;
  auto spawned = Spawn(shim);
  if (!spawned.ok())
    return IoError(name + ": cannot start its supervisor: " + spawned.status().message());
  pid_t pid = *spawned;
  children_.insert(pid);
  facts_[spec.job_dir] = FactsOf(keyed);
  launched_seq_[spec.job_dir] = ++launches_;
  JobHandle handle;
  handle.job_id = spec.job_id;
  handle.job_dir = spec.job_dir;
  handle.pid = pid;
  handle.pid_start_ticks = ProcessStartTicks(pid);
  return handle;
}

std::optional<ExitStatus> ProcessLauncher::Poll(const JobHandle& handle) {
  // A transient error (out of descriptors, an interrupted read) says nothing about the job: it
  // is still running as far as anyone knows, and the next poll asks again.
  auto dir = OpenDirNoFollow(handle.job_dir);
  if (!dir.ok() && dir.status().code() == Code::kUnavailable) return std::nullopt;
  if (!dir.ok()) return NeverLaunched("no supervisor was ever started");
  switch (SupervisorOf(dir->get(), handle)) {
    case Supervisor::kAlive:
    case Supervisor::kUnknown:
      return std::nullopt;
    case Supervisor::kNeverStarted:
      return NeverLaunched("no supervisor was ever started");
    case Supervisor::kGone:
      break;
  }
  auto status = ReadExitStatus(dir->get());
  if (status.ok()) {
    // The program has ended, but a process it left (one that called setsid, or double-forked)
    // would run on with the job's GPUs while the next job gets them: the job is not over until
    // every process of it is gone. Each is killed, and the next poll looks again.
    const SpecFacts& facts = FactsFor(handle, dir->get());
    JobIdentity id = IdentityOf(handle, facts);
    int unsure = 0;
    bool partial = false;
    std::vector<int64_t> left = Members(id, LaunchedSeq(handle), &unsure, &partial);
    if (left.empty() && (partial || Unsettled(handle.job_id, unsure))) return std::nullopt;
    if (left.empty()) {
      leftovers_named_.erase(handle.job_id);
      unsure_since_ms_.erase(handle.job_id);
      facts_.erase(handle.job_dir);  // the job is over: its directory is read no more
      launched_seq_.erase(handle.job_dir);
      return *status;
    }
    if (leftovers_named_.insert(handle.job_id).second)
      log::Warn(
          "job {}: its program ended; killing {} process(es) it left running (pid {}{}) before its "
          "resources are handed on",
          handle.job_id, left.size(), left.front(), left.size() > 1 ? ", ..." : "");
    KillCgroup(facts);
    // At most kKillsPerPoll a poll, each through a pidfd: 3000 left behind cost the loop a share
    // of a pass at a time, and the next polls kill the rest.
    for (size_t i = 0; i < left.size() && i < kKillsPerPoll; ++i)
      SignalIfBelongs(left[i], SIGKILL, [&](int64_t p) { return id.Holds(p, KnownKeyOf(id)); });
    return std::nullopt;
  }
  if (status.status().code() == Code::kUnavailable) return std::nullopt;
  // The shim writes job.pid before the job may run any code of its own: without it the job
  // never started (the daemon died between creating the lock and forking), so it may be queued
  // again without running twice.
  auto pid_text = ReadFileBoundedAt(dir->get(), kJobPidFile, 64);
  if (!pid_text.ok() && pid_text.status().code() == Code::kUnavailable) return std::nullopt;
  if (ReadJobPid(dir->get()) == 0) return NeverLaunched("the job's supervisor never started it");
  ExitStatus lost;
  int unsure = 0;
  bool partial = false;
  if (!Members(IdentityOf(handle, FactsFor(handle, dir->get())), LaunchedSeq(handle), &unsure,
               &partial)
           .empty()) {
    lost.kind = ExitStatus::Kind::kOrphaned;
    lost.error = "the job's supervisor died; its processes still run";
    return lost;
  }
  if (partial || Unsettled(handle.job_id, unsure)) return std::nullopt;
  unsure_since_ms_.erase(handle.job_id);
  facts_.erase(handle.job_dir);
  launched_seq_.erase(handle.job_dir);
  lost.kind = ExitStatus::Kind::kNoStatus;
  lost.error = "the job's supervisor ended without recording an exit status";
  return lost;
}

Status ProcessLauncher::SignalLeader(const JobHandle& handle, int signal) {
  return SignalJob(handle, signal, /*leader_only=*/true);
}

Status ProcessLauncher::Signal(const JobHandle& handle, int signal) {
  return SignalJob(handle, signal, /*leader_only=*/false);
}

Status ProcessLauncher::SignalJob(const JobHandle& handle, int signal, bool leader_only) {
  auto dir = OpenDirNoFollow(handle.job_dir);
  int64_t job_pid = dir.ok() ? ReadJobPid(dir->get()) : 0;
  if (!dir.ok() && dir.status().code() == Code::kUnavailable) return dir.status();
  Supervisor supervisor = dir.ok() ? SupervisorOf(dir->get(), handle) : Supervisor::kNeverStarted;
  // Not known now: nothing is sent, and the caller sends it again later (as before the start).
  if (supervisor == Supervisor::kUnknown)
    return Unavailable("job " + std::to_string(handle.job_id) +
                       ": its supervisor cannot be checked now");
  bool shim_alive = supervisor == Supervisor::kAlive;
  // The job runs in its own process group (job.pid); the shim stays out of reach of the signal
  // and records how the job ended. While the shim lives it has not reaped the job's leader, so
  // the group id (and the leader's pid) cannot have been reused.
  if (job_pid > 0 && shim_alive) {
    pid_t target = static_cast<pid_t>(leader_only ? job_pid : -job_pid);
    if (::kill(target, signal) == 0 || errno == ESRCH) return Status::Ok();
    return IoError("kill job " + std::to_string(handle.job_id) + ": " + ErrnoText(errno));
  }
  // Forked but not started: the job runs nothing before its pid is recorded, and the shim
  // ignores the signal, which a cancel right after the start would lose.
  if (shim_alive)
    return Unavailable("job " + std::to_string(handle.job_id) + " has not started yet");
  // Without its supervisor the leader's pid may be another process's now: only the group's
  // members, each verified, are reached below.
  if (leader_only) {
    if (!dir.ok()) return Status::Ok();  // no directory: the job is gone
    return FailedPrecondition("job " + std::to_string(handle.job_id) + ": its supervisor is gone");
  }
  if (job_pid > 0) {
    // The supervisor is dead: each process verified to be the job's, one by one.
    JobIdentity id = IdentityOf(handle, FactsFor(handle, dir->get()));
    bool partial = false;
    for (int64_t pid : Members(id, LaunchedSeq(handle), nullptr, &partial))
      SignalIfBelongs(pid, signal, [&](int64_t p) { return id.Holds(p, KnownKeyOf(id)); });
    // The node's processes not all read in this pass: the caller sends it again (a later pass).
    if (partial)
      return Unavailable("job " + std::to_string(handle.job_id) +
                         ": its processes are not all found yet");
    return Status::Ok();
  }
  if (handle.pid <= 0) return Status::Ok();
  // A pid reused by an unrelated process must never be signalled.
  if (handle.pid_start_ticks != 0 && ProcessStartTicks(handle.pid) != handle.pid_start_ticks)
    return Status::Ok();
  if (::kill(static_cast<pid_t>(-handle.pid), signal) == 0) return Status::Ok();
  // Just after fork the shim may not have made its own process group yet.
  if (errno == ESRCH && ::kill(static_cast<pid_t>(handle.pid), signal) == 0) return Status::Ok();
  if (errno == ESRCH) return Status::Ok();
  return IoError("kill job " + std::to_string(handle.job_id) + ": " + ErrnoText(errno));
}

std::vector<int64_t> ProcessLauncher::MembersOf(const JobHandle& handle, JobIdentity& id,
                                                bool& complete) {
  complete = true;
  auto dir = OpenDirNoFollow(handle.job_dir);
  if (!dir.ok()) return {};  // gone
  id = IdentityOf(handle, FactsFor(handle, dir->get()));
  bool partial = false;
  int unsure = 0;
  std::vector<int64_t> pids = Members(id, LaunchedSeq(handle), &unsure, &partial);
  // Some not looked at yet (the pass's budget), or inside an exec: not known to be all.
  complete = !partial && unsure == 0;
  return pids;
}

Status ProcessLauncher::SignalAll(const JobHandle& handle, int signal) {
  PP_RETURN_IF_ERROR(SignalJob(handle, signal, /*leader_only=*/false));
  // Those that left the group (setsid, setpgid) too, each pinned and verified before the signal.
  JobIdentity id;
  bool complete = true;
  for (int64_t pid : MembersOf(handle, id, complete))
    SignalIfBelongs(pid, signal, [&](int64_t p) { return id.Holds(p, KnownKeyOf(id)); });
  if (!complete) return NotAllFound(handle);
  return Status::Ok();
}

Result<std::vector<int64_t>> ProcessLauncher::AllJobProcesses(const JobHandle& handle) {
  JobIdentity id;
  bool complete = true;
  std::vector<int64_t> pids = MembersOf(handle, id, complete);
  if (!complete) return NotAllFound(handle);
  return pids;
}

Status ProcessLauncher::NotAllFound(const JobHandle& handle) {
  return Unavailable("job " + std::to_string(handle.job_id) +
                     ": its processes are not all found yet");
}

std::vector<int64_t> ProcessLauncher::JobProcesses(const JobHandle& handle) {
  auto dir = OpenDirNoFollow(handle.job_dir);
  if (!dir.ok()) return {};
  return Members(IdentityOf(handle, FactsFor(handle, dir->get())), LaunchedSeq(handle));
}

void ProcessLauncher::Reap() {
  scan_.NewPass();  // a complete round is dropped: the next Members reads the processes again
  keys_.NewPass();
  for (auto it = children_.begin(); it != children_.end();) {
    int wstatus = 0;
    pid_t r = ::waitpid(static_cast<pid_t>(*it), &wstatus, WNOHANG);
    if (r == 0) {
      ++it;
    } else {
      it = children_.erase(it);  // reaped, or not our child any more
    }
  }
}

}  // namespace pinpoint::launch
