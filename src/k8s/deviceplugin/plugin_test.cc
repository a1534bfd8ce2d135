// pinpoint-k8s against a stand-in kubelet that serves Registration and calls the plugin's
// DevicePlugin service over Unix sockets with the real v1beta1 stubs. The plugin polls only
// when told (PollNow; the interval is an hour), and every wait is on a stream or a
// registration, never on time.
#include "k8s/deviceplugin/plugin.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "common/test_dir.h"
#include "k8s/device/allocation.h"
#include "k8s/device/fake_slice_source.h"
#include "k8s/deviceplugin/stand_in_kubelet.h"

namespace pinpoint::k8s {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

constexpr char kGpu[] = "pinpoint.io/gpu";
constexpr char kGpuMem[] = "pinpoint.io/gpu-mem";

// One ListAndWatch stream, as the kubelet holds it.
struct Watch {
  explicit Watch(v1beta1::DevicePlugin::Stub& stub) {
    reader = stub.ListAndWatch(&context, v1beta1::Empty());
  }
  ~Watch() {
    context.TryCancel();
    v1beta1::ListAndWatchResponse ignored;
    while (reader->Read(&ignored)) {
    }
    (void)reader->Finish();
  }
  // The next list as "id=Health" strings; empty optional when the stream ended.
  std::optional<std::vector<std::string>> Next() {
    v1beta1::ListAndWatchResponse response;
    if (!reader->Read(&response)) return std::nullopt;
    std::vector<std::string> out;
    for (const auto& d : response.devices()) out.push_back(d.id() + "=" + d.health());
    return out;
  }
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReader<v1beta1::ListAndWatchResponse>> reader;
};

// How many entries of `list` are on device `index` with `health`.
int Count(const std::vector<std::string>& list, const std::string& prefix,
          const std::string& health) {
  int n = 0;
  for (const std::string& entry : list) {
    if (entry.rfind(prefix, 0) == 0 && entry.substr(entry.find('=') + 1) == health) ++n;
  }
  return n;
}

v1beta1::AllocateRequest AllocateOf(const std::vector<std::vector<std::string>>& containers) {
  v1beta1::AllocateRequest request;
  for (const auto& ids : containers) {
    auto* c = request.add_container_requests();
    for (const auto& id : ids) c->add_devices_ids(id);
  }
  return request;
}

std::vector<std::string> PluginUnits(int device, int from, int to) {
  std::vector<std::string> out;
  for (int u = from; u < to; ++u)
    out.push_back("gpu" + std::to_string(device) + "-mem" + std::to_string(u));
  return out;
}

class PluginTest : public ::testing::Test {
 protected:
  PluginTest()
      : source_(FakeSliceSource::H100x2()), kubelet_(dir_.path()), plugin_(Options(), source_) {}

  PluginOptions Options() const {
    PluginOptions o;
    o.kubelet_dir = dir_.path();
    o.poll_interval_ms = 3600 * 1000;  // polls only on PollNow
    return o;
  }

  // The kubelet up, the plugin started and both resources registered.
  void StartBoth() {
    kubelet_.Start();
    ASSERT_TRUE(plugin_.Start().ok());
    ASSERT_TRUE(kubelet_.WaitForRegistration(kGpu));
    ASSERT_TRUE(kubelet_.WaitForRegistration(kGpuMem));
  }

  std::unique_ptr<v1beta1::DevicePlugin::Stub> Dial(const char* resource) {
    auto request = kubelet_.WaitForRegistration(resource);
    EXPECT_TRUE(request);
    return kubelet_.Dial(request->endpoint());
  }

  TestDir dir_;
  FakeSliceSource source_;
  StandInKubelet kubelet_;
  Plugin plugin_;
};

TEST_F(PluginTest, RegistersBothResources) {
  StartBoth();
  for (const char* resource : {kGpu, kGpuMem}) {
    auto request = kubelet_.WaitForRegistration(resource);
    ASSERT_TRUE(request);
    EXPECT_EQ(request->version(), "v1beta1");
    EXPECT_TRUE(request->options().get_preferred_allocation_available());
    EXPECT_FALSE(request->options().pre_start_required());
    // Its socket is where it said, and only root may connect.
    struct stat st {};
    ASSERT_EQ(::lstat((dir_.path() + "/" + request->endpoint()).c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }
  EXPECT_EQ(kubelet_.WaitForRegistration(kGpu)->endpoint(), "pinpoint-gpu.sock");
  EXPECT_EQ(kubelet_.WaitForRegistration(kGpuMem)->endpoint(), "pinpoint-gpu-mem.sock");

  auto stub = Dial(kGpuMem);
  grpc::ClientContext context;
  v1beta1::DevicePluginOptions options;
  ASSERT_TRUE(stub->GetDevicePluginOptions(&context, v1beta1::Empty(), &options).ok());
  EXPECT_TRUE(options.get_preferred_allocation_available());
}

TEST_F(PluginTest, RegistersWhenTheKubeletComesLater) {
  ASSERT_TRUE(plugin_.Start().ok());  // no kubelet.sock yet
  kubelet_.Start();                   // inotify sees kubelet.sock appear
  ASSERT_TRUE(kubelet_.WaitForRegistration(kGpu));
  ASSERT_TRUE(kubelet_.WaitForRegistration(kGpuMem));
  Watch watch(*Dial(kGpuMem));
  auto list = watch.Next();
  ASSERT_TRUE(list);
  EXPECT_EQ(list->size(), 160u);
}

TEST_F(PluginTest, RegistersAgainAfterTheKubeletRestarts) {
  StartBoth();
  auto old_stub = Dial(kGpuMem);
  auto old_watch = std::make_unique<Watch>(*old_stub);
  ASSERT_TRUE(old_watch->Next());

  kubelet_.Stop();
  kubelet_.Start();  // removes the plugin's sockets, as the kubelet does, and forgets it
  ASSERT_TRUE(kubelet_.WaitForRegistration(kGpu));
  ASSERT_TRUE(kubelet_.WaitForRegistration(kGpuMem));
  // The old stream ended with the old server; the new socket serves.
  EXPECT_FALSE(old_watch->Next());
  old_watch.reset();
  Watch watch(*Dial(kGpuMem));
  auto list = watch.Next();
  ASSERT_TRUE(list);
  EXPECT_EQ(Count(*list, "gpu", "Healthy"), 160);

  // And once more: restarts are not a one-off.
  kubelet_.Stop();
  kubelet_.Start();
  ASSERT_TRUE(kubelet_.WaitForRegistration(kGpuMem));
  Watch again(*Dial(kGpuMem));
  EXPECT_TRUE(again.Next());
}

TEST_F(PluginTest, ListAndWatchFollowsPinpointdsDevices) {
  StartBoth();
  Watch mem(*Dial(kGpuMem));
  Watch gpu(*Dial(kGpu));
  auto list = mem.Next();
  ASSERT_TRUE(list);
  EXPECT_EQ(list->size(), 160u);
  EXPECT_EQ(Count(*list, "gpu0-", "Healthy"), 80);
  EXPECT_EQ(list->front(), "gpu0-mem0=Healthy");
  auto gpus = gpu.Next();
  ASSERT_TRUE(gpus);
  EXPECT_TRUE(gpus->empty());  // both GPUs are in mps mode: units only

  // GPU 1 drained by MPS faults: its units turn Unhealthy.
  SliceInventory inv = FakeSliceSource::H100x2();
  inv.devices[1].healthy = false;
  source_.SetInventory(inv);
  plugin_.PollNow();
  list = mem.Next();
  ASSERT_TRUE(list);
  EXPECT_EQ(Count(*list, "gpu0-", "Healthy"), 80);
  EXPECT_EQ(Count(*list, "gpu1-", "Unhealthy"), 80);

  // GPU 0 lost (pinpointd lists it no more): still listed, Unhealthy.
  inv.devices.erase(inv.devices.begin());
  source_.SetInventory(inv);
  plugin_.PollNow();
  list = mem.Next();
  ASSERT_TRUE(list);
  EXPECT_EQ(list->size(), 160u);
  EXPECT_EQ(Count(*list, "gpu", "Unhealthy"), 160);

  // Both back, GPU 1 now exclusive: a whole GPU, and its units gone.
  inv = FakeSliceSource::H100x2();
  inv.devices[1].mode = SharingMode::kExclusive;
  source_.SetInventory(inv);
  plugin_.PollNow();
  list = mem.Next();
  ASSERT_TRUE(list);
  EXPECT_EQ(list->size(), 80u);
  EXPECT_EQ(Count(*list, "gpu0-", "Healthy"), 80);
  gpus = gpu.Next();
  ASSERT_TRUE(gpus);
  EXPECT_THAT(*gpus, ElementsAre("gpu1=Healthy"));

  // pinpointd gone: everything Unhealthy.
  source_.FailInventory(Unavailable("pinpointd is not running"));
  plugin_.PollNow();
  gpus = gpu.Next();
  ASSERT_TRUE(gpus);
  EXPECT_THAT(*gpus, ElementsAre("gpu1=Unhealthy"));
}

TEST_F(PluginTest, PreferredAllocationIsTheBestFitOnOneGpu) {
  StartBoth();
  auto stub = Dial(kGpuMem);
  v1beta1::PreferredAllocationRequest request;
  auto* c = request.add_container_requests();
  for (const auto& id : PluginUnits(0, 0, 10)) c->add_available_deviceids(id);   // 10 free on GPU 0
  for (const auto& id : PluginUnits(1, 70, 76)) c->add_available_deviceids(id);  // 6 free on GPU 1
  c->set_allocation_size(5);
  grpc::ClientContext context;
  v1beta1::PreferredAllocationResponse reply;
  ASSERT_TRUE(stub->GetPreferredAllocation(&context, request, &reply).ok());
  ASSERT_EQ(reply.container_responses_size(), 1);
  const auto& ids = reply.container_responses(0).deviceids();
  EXPECT_EQ(std::vector<std::string>(ids.begin(), ids.end()), PluginUnits(1, 70, 75));

  c->set_allocation_size(11);  // no GPU has 11 free
  grpc::ClientContext context2;
  grpc::Status status = stub->GetPreferredAllocation(&context2, request, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("no GPU has 11 free units"));
}

TEST_F(PluginTest, AllocateAnswersWithTheLeasesCdiNameAndItsEnvironment) {
  StartBoth();
  auto stub = Dial(kGpuMem);
  grpc::ClientContext context;
  v1beta1::AllocateResponse reply;
  ASSERT_TRUE(stub->Allocate(&context, AllocateOf({PluginUnits(1, 0, 5)}), &reply).ok());
  ASSERT_EQ(reply.container_responses_size(), 1);
  const auto& r = reply.container_responses(0);
  ASSERT_EQ(r.cdi_devices_size(), 1);
  EXPECT_EQ(r.cdi_devices(0).name(), "pinpoint.io/slice=L1");
  EXPECT_THAT(r.envs(),
              UnorderedElementsAre(Pair("PINPOINT_LEASE", "L1"), Pair("CUDA_VISIBLE_DEVICES", "1"),
                                   Pair("CUDA_MPS_PIPE_DIRECTORY", "/run/pinpoint/mps")));
  ASSERT_EQ(r.mounts_size(), 1);
  EXPECT_EQ(r.mounts(0).container_path(), "/run/pinpoint/mps");
  EXPECT_EQ(r.mounts(0).host_path(), "/var/lib/pinpoint/leases/L1");
  ASSERT_EQ(r.devices_size(), 1);
  EXPECT_EQ(r.devices(0).host_path(), "/dev/nvidia1");
  EXPECT_EQ(r.devices(0).permissions(), "rw");
  EXPECT_EQ(r.annotations().at("pinpoint.io/lease"), "L1");

  auto opened = source_.opened();
  ASSERT_EQ(opened.size(), 1u);
  EXPECT_EQ(opened[0].kind, LeaseKind::kMemory);
  EXPECT_THAT(opened[0].device_indices, ElementsAre(1));
  EXPECT_EQ(opened[0].gpu_mem_bytes, uint64_t{5} << 30);
  EXPECT_EQ(opened[0].resource, kGpuMem);
}

TEST_F(PluginTest, AllocateRefusesUnitsSpanningGpus) {
  StartBoth();
  auto stub = Dial(kGpuMem);
  auto ids = PluginUnits(0, 0, 3);
  for (const auto& id : PluginUnits(1, 0, 2)) ids.push_back(id);
  grpc::ClientContext context;
  v1beta1::AllocateResponse reply;
  grpc::Status status = stub->Allocate(&context, AllocateOf({ids}), &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(),
              HasSubstr("the 5 units span GPUs 0 and 1; a slice must be on one GPU"));
  EXPECT_TRUE(source_.opened().empty());
}

TEST_F(PluginTest, AllocateIsAllOrNothing) {
  StartBoth();
  auto stub = Dial(kGpuMem);
  grpc::ClientContext context;
  v1beta1::AllocateResponse reply;
  grpc::Status status = stub->Allocate(
      &context, AllocateOf({PluginUnits(0, 0, 2), {"gpu0-mem2", "gpu1-mem0"}}), &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(source_.opened().size(), 1u);
  EXPECT_THAT(source_.closed(), ElementsAre("L1"));  // the first container's lease is undone
}

TEST_F(PluginTest, AllocateFailsClearlyWithoutLeasesInPinpointd) {
  StartBoth();
  source_.FailLeases(Unavailable("leases not available in this pinpointd"));
  auto stub = Dial(kGpuMem);
  grpc::ClientContext context;
  v1beta1::AllocateResponse reply;
  grpc::Status status = stub->Allocate(&context, AllocateOf({PluginUnits(0, 0, 1)}), &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(status.error_message(), "leases not available in this pinpointd");
}

TEST_F(PluginTest, AllocateRefusesAnUnhealthyDevice) {
  StartBoth();
  Watch watch(*Dial(kGpuMem));
  ASSERT_TRUE(watch.Next());
  SliceInventory inv = FakeSliceSource::H100x2();
  inv.devices[0].healthy = false;
  inv.devices[0].unhealthy_reason = "3 MPS faults within an hour";
  source_.SetInventory(inv);
  plugin_.PollNow();
  ASSERT_TRUE(watch.Next());  // the plugin has taken the new reading
  auto stub = Dial(kGpuMem);
  grpc::ClientContext context;
  v1beta1::AllocateResponse reply;
  grpc::Status status = stub->Allocate(&context, AllocateOf({PluginUnits(0, 0, 1)}), &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("unhealthy: 3 MPS faults within an hour"));
}

TEST_F(PluginTest, RequestsAreBounded) {
  StartBoth();
  auto stub = Dial(kGpuMem);
  {  // too many containers
    std::vector<std::vector<std::string>> containers(kMaxContainers + 1, {"gpu0-mem0"});
    grpc::ClientContext context;
    v1beta1::AllocateResponse reply;
    EXPECT_EQ(stub->Allocate(&context, AllocateOf(containers), &reply).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
  }
  {  // too many IDs for one container
    std::vector<std::string> ids(kMaxDeviceIds + 1, "gpu0-mem0");
    grpc::ClientContext context;
    v1beta1::AllocateResponse reply;
    grpc::Status status = stub->Allocate(&context, AllocateOf({ids}), &reply);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr("at most 8192"));
  }
  {  // a message past the limit never reaches the handler
    std::vector<std::string> ids(kMaxMessageBytes / 1000 + 1, std::string(1000, 'x'));
    grpc::ClientContext context;
    v1beta1::AllocateResponse reply;
    EXPECT_EQ(stub->Allocate(&context, AllocateOf({ids}), &reply).error_code(),
              grpc::StatusCode::RESOURCE_EXHAUSTED);
  }
  EXPECT_TRUE(source_.opened().empty());
  {  // at most kMaxWatchers streams
    std::vector<std::unique_ptr<Watch>> watches;
    for (int i = 0; i < kMaxWatchers; ++i) {
      watches.push_back(std::make_unique<Watch>(*stub));
      ASSERT_TRUE(watches.back()->Next());
    }
    grpc::ClientContext context;
    auto reader = stub->ListAndWatch(&context, v1beta1::Empty());
    v1beta1::ListAndWatchResponse response;
    EXPECT_FALSE(reader->Read(&response));
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  }
}

TEST_F(PluginTest, AFileThatIsNotASocketIsLeftAlone) {
  std::string path = dir_.path() + "/pinpoint-gpu.sock";
  { std::ofstream(path) << "not ours"; }
  Status status = plugin_.Start();
  EXPECT_EQ(status.code(), Code::kIo);
  EXPECT_THAT(status.message(), HasSubstr("cannot serve pinpoint.io/gpu on"));
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
}

TEST(PluginOptionsTest, BadOptionsAreRefused) {
  PluginOptions ok;
  EXPECT_TRUE(ValidateOptions(ok).ok());
  auto with = [&](auto change) {
    PluginOptions o = ok;
    change(o);
    return ValidateOptions(o);
  };
  EXPECT_FALSE(with([](PluginOptions& o) { o.kubelet_dir = "relative"; }).ok());
  EXPECT_FALSE(with([](PluginOptions& o) { o.kubelet_dir = "/" + std::string(120, 'd'); }).ok());
  EXPECT_FALSE(with([](PluginOptions& o) { o.kubelet_socket = "../kubelet.sock"; }).ok());
  EXPECT_FALSE(with([](PluginOptions& o) { o.mem_unit_bytes = 1 << 20; }).ok());
  EXPECT_FALSE(with([](PluginOptions& o) { o.poll_interval_ms = 0; }).ok());
}

}  // namespace
}  // namespace pinpoint::k8s
