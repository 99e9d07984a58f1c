// demo: a small, realistic pipeline, profiled by the README's main example.
// Each step, inside an NVTX range "step": upload an input (pinned H2D),
// compute (a memset and three kernels of different cost), download the result
// (pinned D2H) and a scalar (pageable D2H, which blocks the host), then some
// host work (a sleep) while the GPU idles. The matmul is timed with events.
#include <nvtx3/nvToolsExt.h>

#include <cmath>
#include <thread>

#include "testapps/common/testapp.h"

__global__ void preprocess(float* x, int n) {
  ct::ForElement(n, [=](int i) { x[i] = x[i] * 2.0f + 1.0f; });
}

// C = A * B for n x n matrices, one thread per element, no tiling: the
// expensive kernel of the pipeline on purpose.
__global__ void matmul_naive(float* a, float* b, float* c, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float sum = 0.0f;
    for (int k = 0; k < n; ++k) sum += a[row * n + k] * b[k * n + col];
    c[row * n + col] = sum;
  }
}

__global__ void reduce_sum(float* x, float* out, int n) {
  __shared__ float partial[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}

int main(int argc, char** argv) {
  ct::Args args(argc, argv, "demo", "a small pipeline: copies, kernels, NVTX steps, host work");
  const long steps = args.Int("steps", 10, "pipeline steps", 1);
  const long n = args.Int("n", 1024, "matrix size (n x n floats)", 16);
  const long host_ms = args.Int("host-ms", 2, "host work (sleep) per step, in ms", 0);
  const std::string truth_path =
      args.Finish({"preprocess(float*, int)", "matmul_naive(float*, float*, float*, int)",
                   "reduce_sum(float*, float*, int)"});
  if (n > 4096) ct::Fail("--n must be <= 4096");

  const int elems = static_cast<int>(n * n);
  const size_t bytes = static_cast<size_t>(elems) * sizeof(float);
  float* host_in = nullptr;
  float* host_out = nullptr;
  CT_CHECK(cudaMallocHost(&host_in, bytes));
  CT_CHECK(cudaMallocHost(&host_out, bytes));
  for (int i = 0; i < elems; ++i) host_in[i] = 1.0f;
  float* a = nullptr;
  float* c = nullptr;
  float* sum = nullptr;
  CT_CHECK(cudaMalloc(&a, bytes));
  CT_CHECK(cudaMalloc(&c, bytes));
  CT_CHECK(cudaMalloc(&sum, sizeof(float)));
  cudaStream_t s;
  CT_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  const dim3 block2(16, 16);
  const dim3 grid2(static_cast<unsigned>((n + 15) / 16), static_cast<unsigned>((n + 15) / 16));
  const int grid1 = (elems + 255) / 256;
  std::vector<int64_t> matmul_ns;
  bool ok = true;
  for (long step = 0; step < steps; ++step) {
    nvtxRangePushA("step");

    nvtxRangePushA("upload");
    CT_CHECK(cudaMemcpyAsync(a, host_in, bytes, cudaMemcpyHostToDevice, s));
    nvtxRangePop();

    nvtxRangePushA("compute");
    CT_CHECK(cudaMemsetAsync(sum, 0, sizeof(float), s));
    preprocess<<<grid1, 256, 0, s>>>(a, elems);
    ct::EventTimer timer;
    timer.Start(s);
    matmul_naive<<<grid2, block2, 0, s>>>(a, a, c, static_cast<int>(n));
    timer.Stop(s);
    reduce_sum<<<grid1, 256, 0, s>>>(c, sum, elems);
    CT_CHECK_LAUNCH();
    nvtxRangePop();

    nvtxRangePushA("download");
    float total = 0.0f;
    CT_CHECK(cudaMemcpyAsync(host_out, c, bytes, cudaMemcpyDeviceToHost, s));
    CT_CHECK(cudaMemcpyAsync(&total, sum, sizeof(float), cudaMemcpyDeviceToHost, s));
    CT_CHECK(cudaStreamSynchronize(s));
    nvtxRangePop();

    nvtxRangePop();
    matmul_ns.push_back(timer.ElapsedNs());
    // Every input is 3 after preprocess, so every output is 9 n (exact in float).
    if (host_out[0] != 9.0f * static_cast<float>(n) || !(std::fabs(total) > 0.0f)) ok = false;
    if (host_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(host_ms));
  }

  ct::Truth truth("demo");
  truth.Kernels("preprocess(float*, int)", steps);
  truth.Kernels("matmul_naive(float*, float*, float*, int)", steps);
  truth.Kernels("reduce_sum(float*, float*, int)", steps);
  truth.Copies("HtoD", steps, static_cast<int64_t>(bytes), false);
  truth.Copies("DtoH", steps, static_cast<int64_t>(bytes), false);
  truth.Copies("DtoH", steps, sizeof(float), true);
  truth.Memsets(steps, sizeof(float));
  truth.Nvtx("default", "step", 0, steps, 7 * steps);
  truth.Nvtx("default", "upload", 1, steps, steps);
  truth.Nvtx("default", "compute", 1, steps, 4 * steps);
  truth.Nvtx("default", "download", 1, steps, 2 * steps);
  truth.TimedKernels("matmul_naive(float*, float*, float*, int)", matmul_ns);
  truth.Write(truth_path);

  CT_CHECK(cudaStreamDestroy(s));
  CT_CHECK(cudaFree(a));
  CT_CHECK(cudaFree(c));
  CT_CHECK(cudaFree(sum));
  CT_CHECK(cudaFreeHost(host_in));
  CT_CHECK(cudaFreeHost(host_out));
  if (!ok) {
    std::fprintf(stderr, "demo: wrong results\n");
    return 1;
  }
  ct::Say("demo: %ld steps of %ldx%ld done, results ok\n", steps, n, n);
  return 0;
}
