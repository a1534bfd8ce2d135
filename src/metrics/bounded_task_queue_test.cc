#include "metrics/bounded_task_queue.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <thread>

#include "metrics/http_server.h"

namespace pinpoint::metrics {
namespace {

TEST(BoundedTaskQueueTest, AFullQueueHoldsItsCallerInsteadOfGrowing) {
  BoundedTaskQueue queue(/*workers=*/1, /*max_waiting=*/1);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> first_running;
  std::atomic<int> ran{0};
  queue.enqueue([&] {
    first_running.set_value();
    released.wait();
    ++ran;
  });
  first_running.get_future().wait();  // the one worker is busy
  queue.enqueue([&] { ++ran; });      // waits in the one place
  std::thread third([&] { queue.enqueue([&] { ++ran; }); });
  ASSERT_TRUE(queue.WaitUntilAnEnqueueWaits(std::chrono::seconds(60))) << "no enqueue waited";
  EXPECT_EQ(queue.held(), 2u) << "the third connection must not be taken while the queue is full";
  release.set_value();
  third.join();
  queue.shutdown();
  EXPECT_EQ(ran.load(), 3);
  EXPECT_EQ(queue.most_held(), 2u);
}

TEST(BoundedTaskQueueTest, ShutdownReleasesAWaitingCaller) {
  BoundedTaskQueue queue(1, 0);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> running;
  queue.enqueue([&] {
    running.set_value();
    released.wait();
  });
  running.get_future().wait();
  std::thread::id ran_on;
  std::thread waiting([&] { queue.enqueue([&] { ran_on = std::this_thread::get_id(); }); });
  std::thread::id waiting_id = waiting.get_id();
  ASSERT_TRUE(queue.WaitUntilAnEnqueueWaits(std::chrono::seconds(60))) << "no enqueue waited";
  std::thread stopper([&] { queue.shutdown(); });
  waiting.join();  // released by the shutdown, not by room: the worker is still busy
  EXPECT_EQ(ran_on, waiting_id) << "run by its caller, so that the connection it owns is closed";
  release.set_value();
  stopper.join();
}

// Attack: many idle loopback connections. The server holds a bounded number of them, and serves
// /metrics again once they are gone.
TEST(MetricsServerTest, ManyIdleConnectionsAreHeldWithinTheBound) {
  auto server = MetricsServer::Start("127.0.0.1:0");
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  (*server)->Publish("pinpoint_up 1\n");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>((*server)->port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::vector<int> idle;
  for (int i = 0; i < 300; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    (void)::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));  // in progress is fine
    idle.push_back(fd);
  }
  for (int fd : idle) ::close(fd);
  httplib::Client client("127.0.0.1", (*server)->port());
  client.set_connection_timeout(30);
  client.set_read_timeout(30);
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res) << "the metrics server stopped serving";
  EXPECT_EQ(res->body, "pinpoint_up 1\n");
  EXPECT_LE((*server)->most_connections_held(), MetricsServer::kWorkers + MetricsServer::kWaiting);
}

}  // namespace
}  // namespace pinpoint::metrics
