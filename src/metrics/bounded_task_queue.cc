#include "metrics/bounded_task_queue.h"

#include <pthread.h>

#include <algorithm>

namespace pinpoint::metrics {

BoundedTaskQueue::BoundedTaskQueue(size_t workers, size_t max_waiting,
                                   std::atomic<size_t>* most_held)
    : capacity_(std::max<size_t>(workers, 1) + max_waiting), most_held_out_(most_held) {
  for (size_t i = 0; i < std::max<size_t>(workers, 1); ++i)
    threads_.emplace_back([this] { Work(); });
}

BoundedTaskQueue::~BoundedTaskQueue() { shutdown(); }

void BoundedTaskQueue::enqueue(std::function<void()> fn) {
  std::unique_lock lock(mu_);
  if (waiting_.size() + running_ >= capacity_ && !shutdown_) {
    ++blocked_enqueues_;
    enqueue_waits_.notify_all();
    room_.wait(lock, [&] { return waiting_.size() + running_ < capacity_ || shutdown_; });
    --blocked_enqueues_;
  }
  if (shutdown_) {
    // No worker will take it: run it here, so that what it owns (a connection) is closed.
    lock.unlock();
    fn();
    return;
  }
  waiting_.push_back(std::move(fn));
  most_held_ = std::max(most_held_, waiting_.size() + running_);
  if (most_held_out_ != nullptr) most_held_out_->store(most_held_);
  work_ready_.notify_one();
}

void BoundedTaskQueue::shutdown() {
  {
    std::lock_guard lock(mu_);
    if (shutdown_ && threads_.empty()) return;
    shutdown_ = true;
  }
  work_ready_.notify_all();
  room_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  std::lock_guard lock(mu_);
  threads_.clear();
}

size_t BoundedTaskQueue::held() const {
  std::lock_guard lock(mu_);
  return waiting_.size() + running_;
}

size_t BoundedTaskQueue::most_held() const {
  std::lock_guard lock(mu_);
  return most_held_;
}

bool BoundedTaskQueue::WaitUntilAnEnqueueWaits(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return enqueue_waits_.wait_for(lock, timeout, [&] { return blocked_enqueues_ > 0; });
}

void BoundedTaskQueue::Work() {
  ::pthread_setname_np(::pthread_self(), "pp-metrics-w");
  for (;;) {
    std::function<void()> fn;
    {
      std::unique_lock lock(mu_);
      work_ready_.wait(lock, [&] { return !waiting_.empty() || shutdown_; });
      if (waiting_.empty()) return;  // shut down, and nothing left to serve
      fn = std::move(waiting_.front());
      waiting_.pop_front();
      ++running_;
    }
    fn();
    {
      std::lock_guard lock(mu_);
      --running_;
    }
    room_.notify_one();
  }
}

}  // namespace pinpoint::metrics
