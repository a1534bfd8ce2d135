#include "watch/process_owner.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/spawn.h"

namespace pinpoint::watch {
namespace {

TEST(ProcessOwnerTest, ParsesTheCgroupV2Line) {
  EXPECT_EQ(CgroupV2Path("0::/pinpoint/job-7\n"), "/pinpoint/job-7");
  EXPECT_EQ(CgroupV2Path("12:cpu:/x\n0::/system.slice/a.service\n"), "/system.slice/a.service");
  EXPECT_EQ(CgroupV2Path("12:cpu:/x\n"), "");
  EXPECT_EQ(CgroupV2Path(""), "");
}

TEST(ProcessOwnerTest, FindsTheJobIdInAnEnvironment) {
  using namespace std::string_literals;
  EXPECT_EQ(JobIdInEnviron("A=1\0PINPOINT_JOB_ID=42\0B=2\0"s), 42);
  EXPECT_EQ(JobIdInEnviron("PINPOINT_JOB_ID=42"s), 42);
  EXPECT_FALSE(JobIdInEnviron("PINPOINT_JOB_ID=4x2\0"s).has_value());
  EXPECT_FALSE(JobIdInEnviron("PINPOINT_JOB_ID=\0"s).has_value());
  EXPECT_FALSE(JobIdInEnviron("XPINPOINT_JOB_ID=4\0"s).has_value());
  EXPECT_FALSE(JobIdInEnviron(""s).has_value());
}

// A child that waits on a pipe until the test closes it.
class Child {
 public:
  Child(bool new_session, const char* env) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(fds[1]);
      if (new_session) ::setsid();
      char buf;
      if (env != nullptr) {
        char* const argv[] = {const_cast<char*>("/bin/sh"), const_cast<char*>("-c"),
                              const_cast<char*>("read x"), nullptr};
        char* const envp[] = {const_cast<char*>(env), nullptr};
        ::dup2(fds[0], 0);
        ::execve("/bin/sh", argv, envp);
      }
      while (::read(fds[0], &buf, 1) > 0) {
      }
      ::_exit(0);
    }
    ::close(fds[0]);
    write_end_ = fds[1];
  }
  ~Child() {
    ::close(write_end_);
    EXPECT_TRUE(WaitChild(pid_, 120'000).has_value()) << "the child did not end: killed";
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int write_end_ = -1;
};

TEST(ProcessOwnerTest, ProcessInAJobsSessionBelongsToIt) {
  Child child(/*new_session=*/true, nullptr);
  // Its session id is its own pid only once setsid ran: the owner must see it either way the
  // test is scheduled, so look until it does.
  ProcProcessOwner owner;
  WatchedJob job;
  job.id = 5;
  job.session_id = child.pid();
  WatchedJob other;
  other.id = 6;
  other.session_id = 1;
  std::optional<JobId> found;
  for (int i = 0; i < 100000 && !found; ++i) found = owner.OwnerOf(child.pid(), {other, job});
  EXPECT_EQ(found, 5);
  EXPECT_FALSE(owner.OwnerOf(child.pid(), {other}).has_value());
}

// The owner of a child started with an environment: that environment is the exec'd one only after
// execve, so look until an owner is found (or give up after many looks).
std::optional<JobId> OwnerOnceExeced(ProcProcessOwner& owner, pid_t pid,
                                     const std::vector<WatchedJob>& jobs) {
  std::optional<JobId> found;
  for (int i = 0; i < 100000 && !found; ++i) found = owner.OwnerOf(pid, jobs);
  return found;
}

TEST(ProcessOwnerTest, ProcessThatLeftTheSessionIsFoundByItsEnvironment) {
  Child child(/*new_session=*/false, "PINPOINT_JOB_ID=9");
  ProcProcessOwner owner;
  WatchedJob job;
  job.id = 9;
  job.uid = ::getuid();
  job.session_id = 999999999;  // not its session
  EXPECT_EQ(OwnerOnceExeced(owner, child.pid(), {job}), 9);
  WatchedJob unrelated;
  unrelated.id = 10;
  EXPECT_FALSE(owner.OwnerOf(child.pid(), {unrelated}).has_value());
}

// Attack: a process of one user that sets PINPOINT_JOB_ID to another user's job had its GPU memory
// charged to that job, which the watcher then killed for going over its slice.
TEST(ProcessOwnerTest, AnotherUsersProcessNamingAJobIsNotThatJobs) {
  Child child(/*new_session=*/false, "PINPOINT_JOB_ID=9");
  ProcProcessOwner owner;
  WatchedJob mine;
  mine.id = 9;
  mine.uid = ::getuid();
  mine.session_id = 999999999;
  ASSERT_EQ(OwnerOnceExeced(owner, child.pid(), {mine}), 9) << "the environment is read";
  WatchedJob theirs = mine;
  theirs.uid = ::getuid() + 1;  // the job of another user
  EXPECT_FALSE(owner.OwnerOf(child.pid(), {theirs}).has_value());
}

TEST(ProcessOwnerTest, NoProcessNoOwner) {
  ProcProcessOwner owner;
  WatchedJob job;
  job.id = 1;
  job.session_id = 1;
  EXPECT_FALSE(owner.OwnerOf(999999999, {job}).has_value());
}

}  // namespace
}  // namespace pinpoint::watch
