#include "pinpoint/service_class.h"

namespace pinpoint {

namespace {

struct ModeName {
  PreemptMode mode;
  const char* name;
};
constexpr ModeName kModes[] = {{PreemptMode::kOff, "off"},
                               {PreemptMode::kRequeue, "requeue"},
                               {PreemptMode::kSuspend, "suspend"},
                               {PreemptMode::kCancel, "cancel"}};

}  // namespace

const char* PreemptModeName(PreemptMode mode) {
  for (const auto& m : kModes)
    if (m.mode == mode) return m.name;
  return "?";
}

std::optional<PreemptMode> PreemptModeFromName(const std::string& name) {
  for (const auto& m : kModes)
    if (name == m.name) return m.mode;
  return std::nullopt;
}

std::vector<ServiceClass> DefaultServiceClasses() {
  return {ServiceClass{.name = kDefaultQos, .preempts = {"scavenger"}},
          ServiceClass{.name = "scavenger",
                       .priority = -1000,
                       .preempt_mode = PreemptMode::kRequeue,
                       .grace_s = 30,
                       .mps_client_priority = 1}};
}

const ServiceClass* FindServiceClass(const std::vector<ServiceClass>& classes,
                                     const std::string& name) {
  for (const ServiceClass& c : classes)
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace pinpoint
