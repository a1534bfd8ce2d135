// A LeaseSpecs for tests: records which leases' specs were removed, and may fail.
#pragma once

#include <vector>

#include "cdi/spec.h"

namespace pinpoint::cdi {

class FakeLeaseSpecs final : public LeaseSpecs {
 public:
  Status Remove(JobId lease) override {
    removed.push_back(lease);
    return fail ? IoError("spec directory gone") : Status::Ok();
  }
  std::vector<JobId> removed;
  bool fail = false;
};

}  // namespace pinpoint::cdi
