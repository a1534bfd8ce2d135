#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "api/caller.h"
#include "api/protocol.h"
#include "api/server.h"
#include "common/test_dir.h"
#include "pinpoint/client.h"

namespace pinpoint::api {
namespace {

using nlohmann::json;

TEST(ProtocolTest, RejectsMalformedRequests) {
  struct Case {
    std::string line;
    const char* message;
  };
  const Case cases[] = {
      {"not json", "not valid JSON"},
      {"[1,2]", "must be a JSON object"},
      {"{\"op\": 5}", "no \"op\""},
      {"{}", "no \"op\""},
      {std::string(kMaxMessageBytes + 1, ' '), "larger than 1 MiB"},
  };
  for (const auto& c : cases) {
    auto r = ParseRequest(c.line);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << r.status().message();
  }
  EXPECT_TRUE(ParseRequest("{\"op\":\"queue\"}").ok());
}

TEST(PermissionTest, OwnersAndRootControlJobs) {
  struct Case {
    uint32_t caller_uid;
    uint32_t job_uid;
    bool allowed;
  } cases[] = {{1000, 1000, true}, {1000, 1001, false}, {0, 1001, true}, {1001, 0, false}};
  for (const auto& c : cases) {
    Caller caller;
    caller.uid = c.caller_uid;
    EXPECT_EQ(MayControlJob(caller, c.job_uid), c.allowed) << c.caller_uid << " on " << c.job_uid;
  }
}

TEST(PermissionTest, OnlyRootSubmitsAsAnotherUser) {
  Caller user;
  user.uid = 1000;
  Caller root;
  EXPECT_TRUE(CheckSubmitAs(user, "").ok());
  EXPECT_EQ(CheckSubmitAs(user, "alice").code(), Code::kPermissionDenied);
  EXPECT_TRUE(CheckSubmitAs(root, "alice").ok());
}

// Echoes requests; defers "later" requests until Release().
class EchoHandler : public Handler {
 public:
  std::optional<json> Handle(const Caller& caller, const json& request, ConnId conn) override {
    if (request["op"] == "later") {
      deferred = conn;
      return std::nullopt;
    }
    return OkReply({{"op", request["op"]}, {"uid", caller.uid}});
  }
  void Closed(ConnId conn) override { closed.push_back(conn); }
  std::optional<ConnId> deferred;
  std::vector<ConnId> closed;
};

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = tmp_.path() + "/sock";
    auto server = Server::Listen(path_, &handler_);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
  }
  void TearDown() override { server_.reset(); }
  // Serves until `done` is set by the client thread.
  void ServeUntil(const std::atomic<bool>& done) {
    while (!done) server_->RunOnce(20, {});
  }
  TestDir tmp_;
  std::string path_;
  EchoHandler handler_;
  std::unique_ptr<Server> server_;
};

TEST_F(ServerTest, RepliesWithPeerCredentials) {
  std::atomic<bool> done{false};
  Result<json> reply = Internal("not called");
  std::thread client([&] {
    auto c = Client::Connect(path_);
    if (c.ok()) reply = c->Call({{"op", "hello"}});
    done = true;
  });
  ServeUntil(done);
  client.join();
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ((*reply)["op"], "hello");
  EXPECT_EQ((*reply)["uid"], ::getuid());
}

TEST_F(ServerTest, MalformedAndOversizedMessagesGetErrorsAndServerLivesOn) {
  std::atomic<bool> done{false};
  std::string bad_reply, big_reply;
  Result<json> good = Internal("not called");
  std::thread client([&] {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, path_.c_str());
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      std::string msg = "{{{ not json\n";
      ::send(fd, msg.data(), msg.size(), 0);
      char buf[4096];
      ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n > 0) bad_reply.assign(buf, static_cast<size_t>(n));
      std::string big(kMaxMessageBytes + 100, 'x');
      ::send(fd, big.data(), big.size(), MSG_NOSIGNAL);
      n = ::recv(fd, buf, sizeof(buf), 0);
      if (n > 0) big_reply.assign(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    auto c = Client::Connect(path_);
    if (c.ok()) good = c->Call({{"op", "after"}});
    done = true;
  });
  ServeUntil(done);
  client.join();
  EXPECT_NE(bad_reply.find("\"ok\":false"), std::string::npos) << bad_reply;
  EXPECT_NE(bad_reply.find("not valid JSON"), std::string::npos) << bad_reply;
  EXPECT_NE(big_reply.find("larger than 1 MiB"), std::string::npos) << big_reply;
  ASSERT_TRUE(good.ok());
  EXPECT_EQ((*good)["op"], "after");
}

TEST_F(ServerTest, DeferredReply) {
  std::atomic<bool> done{false};
  Result<json> reply = Internal("not called");
  std::thread client([&] {
    auto c = Client::Connect(path_);
    if (c.ok()) reply = c->Call({{"op", "later"}});
    done = true;
  });
  while (!handler_.deferred) server_->RunOnce(20, {});
  server_->Reply(*handler_.deferred, OkReply({{"answer", 42}}));
  ServeUntil(done);
  client.join();
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ((*reply)["answer"], 42);
}

TEST_F(ServerTest, SecondServerOnSameSocketIsRefused) {
  EchoHandler other;
  auto second = Server::Listen(path_, &other);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kUnavailable);
}

TEST(ClientTest, ConnectFailureNamesTheSocket) {
  auto c = Client::Connect("/nonexistent/pinpointd.sock");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kUnavailable);
  EXPECT_NE(c.status().message().find("/nonexistent/pinpointd.sock"), std::string::npos);
}

}  // namespace
}  // namespace pinpoint::api
