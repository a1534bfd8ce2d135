// BoundedTaskQueue: the metrics server's workers, with a bound on the connections it holds.
//
// cpp-httplib's own pool queues every accepted connection without bound: thousands of idle
// loopback connections held as many descriptors and ran pinpointd out of them. Here enqueue, which
// httplib's accept loop calls once per accepted connection, blocks while `workers` tasks run and
// `max_waiting` wait. The accept loop then accepts nothing more: further connections wait in the
// kernel's listen backlog (or are refused there) and hold no descriptor of pinpointd. So the server
// holds at most workers + max_waiting connections, whoever connects.
//
// Thread-safe. shutdown() runs what was queued, then joins the workers; enqueue after shutdown (or
// waiting when it comes) runs its task in the caller's thread, so that what the task owns is freed.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace pinpoint::metrics {

class BoundedTaskQueue : public httplib::TaskQueue {
 public:
  // `most_held`, when given, is kept at the most held at once too; it must outlive the queue (the
  // server owns it: httplib destroys the queue when its accept loop ends).
  BoundedTaskQueue(size_t workers, size_t max_waiting, std::atomic<size_t>* most_held = nullptr);
  ~BoundedTaskQueue() override;

  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

  // Tasks running or waiting now: the connections held.
  size_t held() const;
  // The most held at once since construction.
  size_t most_held() const;
  // Whether a caller of enqueue is waiting for room within `timeout` (for tests: every wait of a
  // test has a deadline, so a test that would wait forever fails instead).
  bool WaitUntilAnEnqueueWaits(std::chrono::milliseconds timeout);

 private:
  void Work();

  const size_t capacity_;  // workers + max_waiting
  mutable std::mutex mu_;
  std::condition_variable work_ready_;  // a task or shutdown
  std::condition_variable room_;        // a task ended, or shutdown
  std::condition_variable enqueue_waits_;
  std::deque<std::function<void()>> waiting_;
  size_t running_ = 0;
  size_t most_held_ = 0;
  std::atomic<size_t>* most_held_out_;
  size_t blocked_enqueues_ = 0;
  bool shutdown_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace pinpoint::metrics
