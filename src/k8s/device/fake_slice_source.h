// For tests: a SliceSource whose inventory the test sets, whose leases always open (unless told
// to fail), and which records every lease request and close. State is per instance.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "k8s/device/slice_source.h"

namespace pinpoint::k8s {

class FakeSliceSource : public SliceSource {
 public:
  // Two H100s in MPS mode (80 GiB each), as pinpointd's simulated h100x2 node.
  static SliceInventory H100x2() {
    SliceInventory inventory;
    for (int i = 0; i < 2; ++i) {
      SliceDevice d;
      d.index = i;
      d.gpu_index = i;
      d.uuid = "GPU-c864b574-0000-4000-8000-00000000000" + std::to_string(i);
      d.name = "NVIDIA H100 80GB HBM3";
      d.mode = SharingMode::kMps;
      d.mem_bytes = uint64_t{80} << 30;
      inventory.devices.push_back(d);
    }
    return inventory;
  }

  explicit FakeSliceSource(SliceInventory inventory) : inventory_(std::move(inventory)) {}

  void SetInventory(SliceInventory inventory) {
    std::lock_guard lock(mu_);
    inventory_ = std::move(inventory);
    inventory_error_.reset();
  }
  // Inventory() fails with this until the next SetInventory (pinpointd gone).
  void FailInventory(Status status) {
    std::lock_guard lock(mu_);
    inventory_error_ = std::move(status);
  }
  // OpenLease fails with this from now on.
  void FailLeases(Status status) {
    std::lock_guard lock(mu_);
    lease_error_ = std::move(status);
  }

  Result<SliceInventory> Inventory() override {
    std::lock_guard lock(mu_);
    ++inventory_calls_;
    if (inventory_error_) return *inventory_error_;
    return inventory_;
  }

  // Lease "L<n>" for the n-th request (from 1), with the CDI name, the env a slice gets and the
  // MPS pipe directory mounted.
  Result<Lease> OpenLease(const LeaseRequest& request) override {
    std::lock_guard lock(mu_);
    opened_.push_back(request);
    if (lease_error_) return *lease_error_;
    Lease lease;
    lease.id = "L" + std::to_string(opened_.size());
    lease.cdi_devices = {"pinpoint.io/slice=" + lease.id};
    std::string devices;
    for (int index : request.device_indices) {
      devices += (devices.empty() ? "" : ",") + std::to_string(index);
    }
    lease.env["PINPOINT_LEASE"] = lease.id;
    lease.env["CUDA_VISIBLE_DEVICES"] = devices;
    if (request.kind == LeaseKind::kMemory) {
      lease.env["CUDA_MPS_PIPE_DIRECTORY"] = "/run/pinpoint/mps";
      lease.mounts.push_back({"/run/pinpoint/mps", "/var/lib/pinpoint/leases/" + lease.id, false});
    }
    for (int index : request.device_indices) {
      std::string node = "/dev/nvidia" + std::to_string(index);
      lease.device_nodes.push_back({node, node, "rw"});
    }
    return lease;
  }

  Status CloseLease(const std::string& lease_id) override {
    std::lock_guard lock(mu_);
    closed_.push_back(lease_id);
    return Status::Ok();
  }

  std::vector<LeaseRequest> opened() const {
    std::lock_guard lock(mu_);
    return opened_;
  }
  std::vector<std::string> closed() const {
    std::lock_guard lock(mu_);
    return closed_;
  }
  int inventory_calls() const {
    std::lock_guard lock(mu_);
    return inventory_calls_;
  }

 private:
  mutable std::mutex mu_;
  SliceInventory inventory_;
  std::optional<Status> inventory_error_;
  std::optional<Status> lease_error_;
  std::vector<LeaseRequest> opened_;
  std::vector<std::string> closed_;
  int inventory_calls_ = 0;
};

}  // namespace pinpoint::k8s
