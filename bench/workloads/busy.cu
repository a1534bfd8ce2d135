// pp-busy: a small GPU-bound job for demos and tests. Keeps `--blocks` thread blocks busy with a
// fixed amount of arithmetic (`--iters` per thread), so one copy uses only a few SMs and the
// time it takes grows when it has to share them. Optionally holds `--alloc-mib` of device memory.
// `--repeat K` launches its kernel K times, one after the other: a long-running neighbour made of
// short kernels, whose blocks retire and let another client's kernels onto the SMs (one kernel of
// endless blocks holds its SMs until it ends: a 16-block job beside four of them never ran).
// Prints what it saw (device, UUID, MPS environment), when CUDA started for pinpoint-bench's
// breakdown: "pp-cuda first_us=<CLOCK_REALTIME us at its first CUDA call> ready_us=<once its
// context exists>", a "pp-busy ok" line and, last, the work done for pinpoint-bench:
// "pp-work units=<blocks x iters / 1e9> unit=Giter seconds=<since start>".
#include <cuda_runtime.h>

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

__global__ void Spin(float* out, long long iters) {
  float a = threadIdx.x * 0.001f, b = 1.0001f;
  for (long long i = 0; i < iters; ++i) a = a * b + 0.0001f;
  if (a == 12345.0f) out[blockIdx.x] = a;  // keeps the loop from being optimised away
}

__global__ void Poke(char* p, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (; i < n; i += stride) p[i] = 1;
}

long long RealtimeUs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "(unset)";
}

int Check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return 0;
  std::printf("pp-busy error: %s: %s\n", what, cudaGetErrorString(e));
  std::fflush(stdout);
  return e == cudaErrorMemoryAllocation ? 3 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  int blocks = 4;
  long long iters = 20000000;
  long long alloc_mib = 0;
  long long repeat = 1;
  bool bad_access = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--blocks") && i + 1 < argc) blocks = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) iters = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--alloc-mib") && i + 1 < argc) alloc_mib = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--illegal-access")) bad_access = true;
    else {
      std::fprintf(stderr, "usage: pp-busy [--blocks N] [--iters K] [--repeat K] [--alloc-mib M] [--illegal-access]\n");
      return 64;
    }
  }
  std::printf("env CUDA_VISIBLE_DEVICES=%s\n", Env("CUDA_VISIBLE_DEVICES"));
  std::printf("env CUDA_MPS_PIPE_DIRECTORY=%s\n", Env("CUDA_MPS_PIPE_DIRECTORY"));
  std::printf("env CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=%s\n", Env("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"));
  std::printf("env CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%s\n", Env("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"));
  std::printf("env CUDA_MPS_CLIENT_PRIORITY=%s\n", Env("CUDA_MPS_CLIENT_PRIORITY"));
  std::printf("env PINPOINT_JOB_ID=%s\n", Env("PINPOINT_JOB_ID"));
  auto t0 = std::chrono::steady_clock::now();
  long long first_us = RealtimeUs();
  // Sleep rather than spin while waiting for the kernel: many copies share a GPU, and spinning
  // host threads would compete for CPUs with their neighbours.
  if (int rc = Check(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync), "cudaSetDeviceFlags")) return rc;
  int count = 0;
  if (int rc = Check(cudaGetDeviceCount(&count), "cudaGetDeviceCount")) return rc;
  cudaDeviceProp prop{};
  if (int rc = Check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties")) return rc;
  const unsigned char* u = reinterpret_cast<const unsigned char*>(prop.uuid.bytes);
  std::printf("device count=%d name=%s sms=%d uuid=GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
              "%02x%02x%02x%02x%02x%02x\n",
              count, prop.name, prop.multiProcessorCount, u[0], u[1], u[2], u[3], u[4], u[5], u[6],
              u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  // The context (under MPS: the connection to the server) is made by the first call that needs
  // it; make it here, so that ready_us marks it.
  if (int rc = Check(cudaFree(nullptr), "context creation")) return rc;
  std::printf("pp-cuda first_us=%lld ready_us=%lld\n", first_us, RealtimeUs());
  std::fflush(stdout);  // seen in its log while it runs (tests/gpu/qos_priority_gpu.sh waits for it)
  float* out = nullptr;
  if (int rc = Check(cudaMalloc(&out, sizeof(float) * blocks), "cudaMalloc(out)")) return rc;
  char* held = nullptr;
  if (alloc_mib > 0) {
    size_t bytes = static_cast<size_t>(alloc_mib) << 20;
    if (int rc = Check(cudaMalloc(&held, bytes), "cudaMalloc(--alloc-mib)")) return rc;
    Poke<<<1024, 256>>>(held, bytes);
    if (int rc = Check(cudaDeviceSynchronize(), "touch allocation")) return rc;
    std::printf("allocated %lld MiB\n", alloc_mib);
  }
  if (bad_access) {
    Poke<<<1, 1>>>(reinterpret_cast<char*>(0x10), 1);
    return Check(cudaDeviceSynchronize(), "illegal access (intended)") ? 4 : 0;
  }
  for (long long r = 0; r < repeat; ++r) {
    Spin<<<blocks, 256>>>(out, iters);
    if (int rc = Check(cudaDeviceSynchronize(), "kernel")) return rc;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("pp-busy ok blocks=%d iters=%lld seconds=%.3f\n", blocks, iters, secs);
  std::printf("pp-work units=%.6g unit=Giter seconds=%.3f\n",
              static_cast<double>(blocks) * static_cast<double>(iters) * static_cast<double>(repeat) / 1e9,
              secs);
  cudaFree(held);
  cudaFree(out);
  return 0;
}
