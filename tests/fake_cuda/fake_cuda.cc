// For tests only: a stand-in libcuda with the driver's checkpoint API, so that the real
// dlopen/dlsym path of gpu/cuda_checkpoint.cc and pinpoint-checkpoint run on machines without a
// GPU. Each process's state (0 running, 1 locked, 2 checkpointed) is a file
// $FAKE_CUDA_STATE_DIR/<pid> (absent: running); a pid listed in $FAKE_CUDA_REFUSE ("12,34") is
// refused at lock with 801 (CUDA_ERROR_NOT_SUPPORTED, as an MPS client is), one in
// $FAKE_CUDA_FAIL_CHECKPOINT fails its checkpoint with 2 (out of memory), one in
// $FAKE_CUDA_NOT_CUDA is a process without CUDA (every call answers 3, not initialized). A call in
// the wrong state answers 401 (illegal state); a pid that is no process answers 1 (invalid value).
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace {

int StateOf(int pid) {
  const char* dir = std::getenv("FAKE_CUDA_STATE_DIR");
  if (dir == nullptr) return 0;
  std::ifstream in(std::string(dir) + "/" + std::to_string(pid));
  int state = 0;
  return in >> state ? state : 0;
}

void SetState(int pid, int state) {
  const char* dir = std::getenv("FAKE_CUDA_STATE_DIR");
  if (dir == nullptr) return;
  std::ofstream(std::string(dir) + "/" + std::to_string(pid)) << state << "\n";
}

bool Listed(const char* variable, int pid) {
  const char* list = std::getenv(variable);
  if (list == nullptr) return false;
  std::string text = std::string(",") + list + ",";
  return text.find("," + std::to_string(pid) + ",") != std::string::npos;
}

// From `from` to `to`, or the code that refuses it.
int Move(int pid, int from, int to) {
  if (::kill(pid, 0) != 0) return 1;
  if (Listed("FAKE_CUDA_NOT_CUDA", pid)) return 3;
  if (StateOf(pid) != from) return 401;
  SetState(pid, to);
  return 0;
}

}  // namespace

extern "C" {

int cuInit(unsigned int) { return 0; }

int cuGetErrorName(int error, const char** name) {
  switch (error) {
    case 1:
      *name = "CUDA_ERROR_INVALID_VALUE";
      return 0;
    case 2:
      *name = "CUDA_ERROR_OUT_OF_MEMORY";
      return 0;
    case 3:
      *name = "CUDA_ERROR_NOT_INITIALIZED";
      return 0;
    case 401:
      *name = "CUDA_ERROR_ILLEGAL_STATE";
      return 0;
    case 801:
      *name = "CUDA_ERROR_NOT_SUPPORTED";
      return 0;
    default:
      return 1;
  }
}

int cuCheckpointProcessLock(int pid, void*) {
  if (Listed("FAKE_CUDA_REFUSE", pid)) return 801;
  return Move(pid, 0, 1);
}

int cuCheckpointProcessCheckpoint(int pid, void*) {
  if (Listed("FAKE_CUDA_FAIL_CHECKPOINT", pid)) return 2;
  return Move(pid, 1, 2);
}

int cuCheckpointProcessRestore(int pid, void*) { return Move(pid, 2, 1); }

int cuCheckpointProcessUnlock(int pid, void*) { return Move(pid, 1, 0); }

int cuCheckpointProcessGetState(int pid, int* state) {
  if (::kill(pid, 0) != 0) return 1;
  if (Listed("FAKE_CUDA_NOT_CUDA", pid)) return 3;
  *state = StateOf(pid);
  return 0;
}

}  // extern "C"
