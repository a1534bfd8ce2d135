// pp-mlp: a small neural-network training, the kind of job a physics group runs by the dozen: a
// multilayer perceptron (--in features -> --layers hidden layers of --hidden units, ReLU -> one
// logit) trained with SGD and momentum for a fixed number of epochs on a synthetic binary
// classification set that lives on the GPU. The layers are cuBLAS GEMMs plus a few small kernels.
//
// Made GPU-bound rather than launch-bound: one whole epoch (every step's forward pass, loss,
// backward pass and update) is captured once as a CUDA graph and replayed, so the host launches
// one graph per epoch and then sleeps (blocking sync). With the default sizes one copy keeps only
// part of an H100's SMs busy, like the small trainings of the benchmark's seeds.
//
// Prints the first and last epoch's loss and accuracy, "pp-mlp ok ..." and, last, the work done
// for pinpoint-bench: "pp-work units=<epochs> unit=epochs seconds=<since start>".
// Exit codes: 0 ok, 2 CUDA or cuBLAS error, 3 out of device memory, 64 bad usage.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

struct Options {
  int epochs = 20;
  int samples = 65536;
  int batch = 256;
  int in = 64;
  int hidden = 256;
  int layers = 3;  // hidden layers; the network has layers + 1 linear layers
  float lr = 0.02f;
  float momentum = 0.9f;
  bool graph = true;
  bool tf32 = true;
  unsigned seed = 1;
};

int Fail(const char* what, const char* why, bool out_of_memory = false) {
  std::printf("pp-mlp error: %s: %s\n", what, why);
  std::fflush(stdout);
  return out_of_memory ? 3 : 2;
}

#define CUDA_OR_RETURN(expr)                                                       \
  do {                                                                             \
    cudaError_t e_ = (expr);                                                       \
    if (e_ != cudaSuccess)                                                         \
      return Fail(#expr, cudaGetErrorString(e_), e_ == cudaErrorMemoryAllocation); \
  } while (0)
#define CUBLAS_OR_RETURN(expr)                                                         \
  do {                                                                                 \
    cublasStatus_t s_ = (expr);                                                        \
    if (s_ != CUBLAS_STATUS_SUCCESS)                                                   \
      return Fail(#expr, cublasGetStatusString(s_), s_ == CUBLAS_STATUS_ALLOC_FAILED); \
  } while (0)

// A uniform number in [-1, 1) from (seed, i): the data and the initial weights are the same in
// every run, with no RNG library.
__host__ __device__ float Hash01(unsigned seed, unsigned long long i) {
  unsigned long long x = i * 0x9E3779B97F4A7C15ull + seed * 0xBF58476D1CE4E5B9ull + 1;
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<float>(x >> 40) / static_cast<float>(1ull << 23) - 1.0f;
}

// Features x (in x samples, column-major: one sample per column) and labels from a fixed
// nonlinear rule the network has to learn.
__global__ void MakeData(float* x, float* y, int in, int samples, unsigned seed) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= samples) return;
  float s = 0.0f;
  for (int i = 0; i < in; ++i) {
    float v = Hash01(seed, static_cast<unsigned long long>(j) * in + i);
    x[static_cast<size_t>(j) * in + i] = v;
    s += v * sinf(1.7f * static_cast<float>(i) + 0.3f);
  }
  float x0 = x[static_cast<size_t>(j) * in], x1 = x[static_cast<size_t>(j) * in + 1 % in];
  y[j] = (s + 2.0f * x0 * x1 > 0.0f) ? 1.0f : 0.0f;
}

__global__ void InitUniform(float* w, size_t n, float scale, unsigned seed) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) w[i] = scale * Hash01(seed, i);
}

// a = relu(a + b[row]) for an (rows x cols) column-major matrix.
__global__ void BiasRelu(float* a, const float* b, int rows, int cols) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<size_t>(rows) * cols) return;
  float v = a[i] + b[i % rows];
  a[i] = v > 0.0f ? v : 0.0f;
}

// Output layer: p = sigmoid(z + b); dz = (p - y) / batch; adds the batch's binary cross-entropy
// and correct predictions to sums[0] and sums[1].
__global__ void OutputLoss(const float* z, const float* b, const float* y, float* dz, int batch,
                           float* sums) {
  __shared__ float loss_part[256];
  __shared__ float hit_part[256];
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  float loss = 0.0f, hit = 0.0f;
  if (j < batch) {
    float logit = z[j] + b[0];
    float p = 1.0f / (1.0f + expf(-logit));
    dz[j] = (p - y[j]) / static_cast<float>(batch);
    // log(1 + e^-|l|) + max(l, 0) - l*y: stable for large logits.
    loss = log1pf(expf(-fabsf(logit))) + fmaxf(logit, 0.0f) - logit * y[j];
    hit = ((p > 0.5f) == (y[j] > 0.5f)) ? 1.0f : 0.0f;
  }
  loss_part[threadIdx.x] = loss;
  hit_part[threadIdx.x] = hit;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      loss_part[threadIdx.x] += loss_part[threadIdx.x + s];
      hit_part[threadIdx.x] += hit_part[threadIdx.x + s];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    atomicAdd(&sums[0], loss_part[0]);
    atomicAdd(&sums[1], hit_part[0]);
  }
}

// da *= (a > 0): the ReLU's derivative, from the layer's own output.
__global__ void ReluBackward(float* da, const float* a, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n && a[i] <= 0.0f) da[i] = 0.0f;
}

// SGD with momentum over every parameter at once: v = mu v + g; w -= lr v.
__global__ void SgdMomentum(float* w, const float* g, float* v, size_t n, float lr, float mu) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float vi = mu * v[i] + g[i];
  v[i] = vi;
  w[i] -= lr * vi;
}

unsigned Blocks(size_t n, unsigned threads = 256) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}

struct Layer {
  int in = 0, out = 0;
  size_t w = 0, b = 0;  // offsets of the weights (out x in, column-major) and biases
};

struct Net {
  std::vector<Layer> layers;
  size_t params = 0;
  float *w = nullptr, *g = nullptr, *v = nullptr;  // parameters, gradients, momentum
  std::vector<float*> act;                         // act[l]: output of layer l (out x batch)
  float *dz = nullptr, *da = nullptr;              // gradient scratch (max width x batch)
  float* ones = nullptr;                           // batch ones, for bias gradients
  float* sums = nullptr;                           // [loss, correct] of the current epoch
};

// Enqueues one training step on `stream` (the handle is bound to it).
int Step(const Options& o, cublasHandle_t h, cudaStream_t stream, Net& n, const float* x,
         const float* y) {
  const float one = 1.0f, zero = 0.0f;
  const int batch = o.batch;
  const size_t nl = n.layers.size();
  for (size_t l = 0; l < nl; ++l) {
    const Layer& L = n.layers[l];
    const float* in = l == 0 ? x : n.act[l - 1];
    CUBLAS_OR_RETURN(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, L.out, batch, L.in, &one, n.w + L.w,
                                 L.out, in, L.in, &zero, n.act[l], L.out));
    if (l + 1 < nl)
      BiasRelu<<<Blocks(static_cast<size_t>(L.out) * batch), 256, 0, stream>>>(n.act[l], n.w + L.b,
                                                                               L.out, batch);
  }
  OutputLoss<<<Blocks(batch), 256, 0, stream>>>(n.act[nl - 1], n.w + n.layers[nl - 1].b, y, n.dz,
                                                batch, n.sums);
  for (size_t l = nl; l-- > 0;) {
    const Layer& L = n.layers[l];
    const float* in = l == 0 ? x : n.act[l - 1];
    CUBLAS_OR_RETURN(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, L.out, L.in, batch, &one, n.dz, L.out,
                                 in, L.in, &zero, n.g + L.w, L.out));
    CUBLAS_OR_RETURN(cublasSgemv(h, CUBLAS_OP_N, L.out, batch, &one, n.dz, L.out, n.ones, 1, &zero,
                                 n.g + L.b, 1));
    if (l == 0) break;
    CUBLAS_OR_RETURN(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, L.in, batch, L.out, &one, n.w + L.w,
                                 L.out, n.dz, L.out, &zero, n.da, L.in));
    size_t count = static_cast<size_t>(L.in) * batch;
    ReluBackward<<<Blocks(count), 256, 0, stream>>>(n.da, n.act[l - 1], count);
    std::swap(n.dz, n.da);
  }
  SgdMomentum<<<Blocks(n.params), 256, 0, stream>>>(n.w, n.g, n.v, n.params, o.lr, o.momentum);
  CUDA_OR_RETURN(cudaGetLastError());
  return 0;
}

// One epoch: every batch once, in order.
int Epoch(const Options& o, cublasHandle_t h, cudaStream_t stream, Net& n, const float* x,
          const float* y) {
  CUDA_OR_RETURN(cudaMemsetAsync(n.sums, 0, 2 * sizeof(float), stream));
  for (int k = 0; k + o.batch <= o.samples; k += o.batch) {
    if (int rc = Step(o, h, stream, n, x + static_cast<size_t>(k) * o.in, y + k)) return rc;
  }
  return 0;
}

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (!std::strcmp(a, "--no-graph")) {
      o->graph = false;
      continue;
    }
    if (!std::strcmp(a, "--fp32")) {
      o->tf32 = false;
      continue;
    }
    if (v == nullptr) return false;
    ++i;
    if (!std::strcmp(a, "--epochs"))
      o->epochs = std::atoi(v);
    else if (!std::strcmp(a, "--samples"))
      o->samples = std::atoi(v);
    else if (!std::strcmp(a, "--batch"))
      o->batch = std::atoi(v);
    else if (!std::strcmp(a, "--in"))
      o->in = std::atoi(v);
    else if (!std::strcmp(a, "--hidden"))
      o->hidden = std::atoi(v);
    else if (!std::strcmp(a, "--layers"))
      o->layers = std::atoi(v);
    else if (!std::strcmp(a, "--lr"))
      o->lr = static_cast<float>(std::atof(v));
    else if (!std::strcmp(a, "--seed"))
      o->seed = static_cast<unsigned>(std::atoi(v));
    else
      return false;
  }
  return o->epochs >= 1 && o->batch >= 1 && o->samples >= o->batch && o->in >= 1 &&
         o->hidden >= 1 && o->layers >= 1;
}

}  // namespace

int main(int argc, char** argv) {
  auto t0 = std::chrono::steady_clock::now();
  Options o;
  if (!ParseArgs(argc, argv, &o)) {
    std::fprintf(
        stderr,
        "usage: pp-mlp [--epochs N] [--samples N] [--batch N] [--in N] [--hidden N] [--layers N]\n"
        "              [--lr X] [--seed N] [--no-graph] [--fp32]\n");
    return 64;
  }
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  CUDA_OR_RETURN(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
  cudaDeviceProp prop{};
  CUDA_OR_RETURN(cudaGetDeviceProperties(&prop, 0));
  std::printf(
      "pp-mlp device=%s sms=%d visible=%s mps_pipe=%s\n", prop.name, prop.multiProcessorCount,
      visible ? visible : "(unset)",
      std::getenv("CUDA_MPS_PIPE_DIRECTORY") ? std::getenv("CUDA_MPS_PIPE_DIRECTORY") : "(unset)");

  Net n;
  int width = o.in;
  for (int l = 0; l <= o.layers; ++l) {
    Layer L;
    L.in = width;
    L.out = l == o.layers ? 1 : o.hidden;
    L.w = n.params;
    n.params += static_cast<size_t>(L.in) * L.out;
    L.b = n.params;
    n.params += L.out;
    n.layers.push_back(L);
    width = L.out;
  }
  int max_width = o.in > o.hidden ? o.in : o.hidden;
  float *x = nullptr, *y = nullptr;
  CUDA_OR_RETURN(cudaMalloc(&x, sizeof(float) * o.in * static_cast<size_t>(o.samples)));
  CUDA_OR_RETURN(cudaMalloc(&y, sizeof(float) * o.samples));
  CUDA_OR_RETURN(cudaMalloc(&n.w, sizeof(float) * n.params));
  CUDA_OR_RETURN(cudaMalloc(&n.g, sizeof(float) * n.params));
  CUDA_OR_RETURN(cudaMalloc(&n.v, sizeof(float) * n.params));
  CUDA_OR_RETURN(cudaMemset(n.v, 0, sizeof(float) * n.params));
  for (const Layer& L : n.layers) {
    float* a = nullptr;
    CUDA_OR_RETURN(cudaMalloc(&a, sizeof(float) * L.out * static_cast<size_t>(o.batch)));
    n.act.push_back(a);
    InitUniform<<<Blocks(static_cast<size_t>(L.in) * L.out), 256>>>(
        n.w + L.w, static_cast<size_t>(L.in) * L.out, std::sqrt(6.0f / L.in), o.seed + 7);
    CUDA_OR_RETURN(cudaMemset(n.w + L.b, 0, sizeof(float) * L.out));
  }
  CUDA_OR_RETURN(cudaMalloc(&n.dz, sizeof(float) * max_width * static_cast<size_t>(o.batch)));
  CUDA_OR_RETURN(cudaMalloc(&n.da, sizeof(float) * max_width * static_cast<size_t>(o.batch)));
  CUDA_OR_RETURN(cudaMalloc(&n.ones, sizeof(float) * o.batch));
  CUDA_OR_RETURN(cudaMalloc(&n.sums, 2 * sizeof(float)));
  std::vector<float> host_ones(o.batch, 1.0f);
  CUDA_OR_RETURN(
      cudaMemcpy(n.ones, host_ones.data(), sizeof(float) * o.batch, cudaMemcpyHostToDevice));
  MakeData<<<Blocks(o.samples), 256>>>(x, y, o.in, o.samples, o.seed);
  CUDA_OR_RETURN(cudaDeviceSynchronize());

  cudaStream_t stream;
  CUDA_OR_RETURN(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cublasHandle_t h;
  CUBLAS_OR_RETURN(cublasCreate(&h));
  CUBLAS_OR_RETURN(cublasSetStream(h, stream));
  // A workspace of our own, so cuBLAS allocates nothing while the graph is captured.
  const size_t workspace_bytes = 32u << 20;
  void* workspace = nullptr;
  CUDA_OR_RETURN(cudaMalloc(&workspace, workspace_bytes));
  CUBLAS_OR_RETURN(cublasSetWorkspace(h, workspace, workspace_bytes));
  if (o.tf32) CUBLAS_OR_RETURN(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));

  // One step outside any capture first, so cuBLAS picks its kernels and CUDA loads their modules
  // (lazy loading) before the graph is captured.
  if (int rc = Step(o, h, stream, n, x, y)) return rc;
  CUDA_OR_RETURN(cudaStreamSynchronize(stream));

  cudaGraphExec_t epoch_graph = nullptr;
  if (o.graph) {
    // The dz/da scratch pointers swap during a step; capture from a fixed starting order.
    float *dz0 = n.dz, *da0 = n.da;
    cudaGraph_t graph;
    CUDA_OR_RETURN(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    int rc = Epoch(o, h, stream, n, x, y);
    cudaError_t end = cudaStreamEndCapture(stream, &graph);
    if (rc) return rc;
    CUDA_OR_RETURN(end);
    CUDA_OR_RETURN(cudaGraphInstantiate(&epoch_graph, graph, 0));
    CUDA_OR_RETURN(cudaGraphDestroy(graph));
    n.dz = dz0;
    n.da = da0;
  }
  float* host_sums = nullptr;
  CUDA_OR_RETURN(cudaMallocHost(&host_sums, 2 * sizeof(float)));
  auto t_train = std::chrono::steady_clock::now();
  const int steps = o.samples / o.batch;
  const double seen = static_cast<double>(steps) * o.batch;
  float first_loss = 0, last_loss = 0, last_acc = 0;
  for (int e = 1; e <= o.epochs; ++e) {
    if (epoch_graph != nullptr) {
      CUDA_OR_RETURN(cudaGraphLaunch(epoch_graph, stream));
    } else if (int rc = Epoch(o, h, stream, n, x, y)) {
      return rc;
    }
    CUDA_OR_RETURN(
        cudaMemcpyAsync(host_sums, n.sums, 2 * sizeof(float), cudaMemcpyDeviceToHost, stream));
    CUDA_OR_RETURN(cudaStreamSynchronize(stream));
    last_loss = static_cast<float>(host_sums[0] / seen);
    last_acc = static_cast<float>(host_sums[1] / seen);
    if (e == 1) {
      first_loss = last_loss;
      std::printf("pp-mlp epoch 1 loss %.4f acc %.3f\n", last_loss, last_acc);
    }
    if (!std::isfinite(last_loss)) return Fail("training", "loss is not finite");
  }
  auto t_end = std::chrono::steady_clock::now();
  double train_s = std::chrono::duration<double>(t_end - t_train).count();
  double total_s = std::chrono::duration<double>(t_end - t0).count();
  std::printf("pp-mlp epoch %d loss %.4f acc %.3f\n", o.epochs, last_loss, last_acc);
  std::printf(
      "pp-mlp ok epochs=%d steps_per_epoch=%d batch=%d hidden=%d layers=%d params=%zu graph=%d "
      "train_seconds=%.3f epochs_per_s=%.2f loss_first=%.4f loss_last=%.4f\n",
      o.epochs, steps, o.batch, o.hidden, o.layers + 1, n.params, epoch_graph != nullptr ? 1 : 0,
      train_s, o.epochs / train_s, first_loss, last_loss);
  std::printf("pp-work units=%d unit=epochs seconds=%.3f\n", o.epochs, total_s);
  std::fflush(stdout);
  if (epoch_graph != nullptr) cudaGraphExecDestroy(epoch_graph);
  cublasDestroy(h);
  return 0;
}
