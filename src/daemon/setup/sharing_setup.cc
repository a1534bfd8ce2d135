#include "daemon/setup/sharing_setup.h"

#include "sharing/exclusive.h"
#include "sharing/timeslice.h"

namespace pinpoint::daemon {

std::unique_ptr<sharing::Backends> MakeBackends(const SharingSetup& setup) {
  auto backends = std::make_unique<sharing::Backends>();
  backends->Add(std::make_unique<sharing::ExclusiveBackend>());
  backends->Add(std::make_unique<sharing::TimesliceBackend>());
  if (setup.mps != nullptr) backends->Use(setup.mps);
  return backends;
}

}  // namespace pinpoint::daemon
