// pinpoint-shim JOB_DIR LOCK_FD: the per-job supervisor started by pinpointd. Not for people.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "launch/shim.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "pinpoint-shim: started by pinpointd only (usage: JOB_DIR LOCK_FD)\n");
    return 2;
  }
  return pinpoint::launch::RunShim(argv[1], std::atoi(argv[2]));
}
