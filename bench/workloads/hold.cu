// pp-hold: a process whose device memory must come back intact, for suspend (the driver's
// checkpoint API, tests/gpu/checkpoint_gpu.sh). Fills `--mib` MiB of device memory with a pattern,
// then every `--check-ms` checks all of it with a kernel, for `--seconds`. Prints
// "pp-hold ready pid=<pid> mib=<N>" once the memory is filled, and last
// "pp-hold done checks=<N> errors=<words that differed> sum=<checksum of the pattern>".
// Exit 0 when no word ever differed. While its process is locked (checkpointed) its CUDA calls
// wait: the checks pause and go on after the restore.
#include <cuda_runtime.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

__device__ unsigned int Pattern(size_t i) {
  return static_cast<unsigned int>(i * 2654435761ull) ^ 0x5bd1e995u;
}

__global__ void Fill(unsigned int* p, size_t n) {
  size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    p[i] = Pattern(i);
}

__global__ void Check(const unsigned int* p, size_t n, unsigned long long* errors,
                      unsigned long long* sum) {
  size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  unsigned long long bad = 0, s = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    bad += p[i] != Pattern(i);
    s += p[i];
  }
  atomicAdd(errors, bad);
  atomicAdd(sum, s);
}

int Fail(cudaError_t e, const char* what) {
  std::fprintf(stderr, "pp-hold: %s: %s\n", what, cudaGetErrorString(e));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  long long mib = 1024, check_ms = 500, seconds = 30;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--mib") && i + 1 < argc) mib = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--check-ms") && i + 1 < argc) check_ms = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = std::atoll(argv[++i]);
  }
  size_t n = static_cast<size_t>(mib) * (1u << 20) / sizeof(unsigned int);
  unsigned int* p = nullptr;
  unsigned long long* counters = nullptr;
  if (cudaError_t e = cudaMalloc(&p, n * sizeof(unsigned int))) return Fail(e, "cudaMalloc");
  if (cudaError_t e = cudaMalloc(&counters, 2 * sizeof(unsigned long long)))
    return Fail(e, "cudaMalloc(counters)");
  Fill<<<1024, 256>>>(p, n);
  if (cudaError_t e = cudaDeviceSynchronize()) return Fail(e, "fill");
  std::printf("pp-hold ready pid=%d mib=%lld\n", static_cast<int>(getpid()), mib);
  std::fflush(stdout);
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  unsigned long long errors = 0, sum = 0, checks = 0;
  while (std::chrono::steady_clock::now() < end) {
    unsigned long long host[2] = {0, 0};
    if (cudaError_t e = cudaMemset(counters, 0, sizeof(host))) return Fail(e, "memset");
    Check<<<1024, 256>>>(p, n, counters, counters + 1);
    if (cudaError_t e = cudaMemcpy(host, counters, sizeof(host), cudaMemcpyDeviceToHost))
      return Fail(e, "check");
    errors += host[0];
    sum = host[1];
    ++checks;
    std::this_thread::sleep_for(std::chrono::milliseconds(check_ms));
  }
  std::printf("pp-hold done checks=%llu errors=%llu sum=%llu\n", checks, errors, sum);
  return errors == 0 ? 0 : 1;
}
