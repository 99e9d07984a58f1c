// known_work: kernels whose hardware-counter values are known in advance, for
// checking cutrace's counters (tests/gpu/counters.py) against ncu and against
// arithmetic.
//
//   ct_copy_kernel   reads N bytes and writes N bytes once, coalesced float4
//                    (N = --mib MiB, default 2048: 40x the H200's L2, so
//                    DRAM traffic is the copy itself to within ~2.5%)
//   ct_fma_kernel    blocks x threads threads, each doing 4 x --iters
//                    dependent FP32 FMAs (four accumulators): exactly that
//                    many FFMA thread instructions
//
//   --occupancy-kernels adds two kernels whose theoretical occupancy is set by
//   a limit other than warps, for the occupancy check (tests/gpu/counters.py):
//   ct_smem_kernel   256 threads and 64 KiB of dynamic shared memory a block:
//                    shared memory limits the blocks per SM (3 on an H200)
//   ct_tiny_block_kernel  32 threads a block: the blocks-per-SM limit (32 on
//                    an H200) holds it to half the SM's warps
//   Each runs twice, after the NVTX ranges.
//
// NVTX: range "copy_phase" holds two copy launches, "fma_phase" three fma
// launches, so a per-range counter equals the sum over its kernels.
// --truth FILE writes {"copy_bytes","copy_launches","ffma_per_launch",
// "fma_launches","ranges":{...}}.
//
// Instead of the above (issue 20): --phases N runs N sequential outermost
// NVTX ranges "phase", each with a nested "copy" around two copy launches
// (2 x N bytes read per phase); --repeat K launches the copy and the FMA
// kernel K times each, interleaved (for --launch-skip/--launch-count). Their
// truth: {"phases","phase_read_bytes","repeat"}.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define CHECK(call)                                                              \
  do {                                                                           \
    cudaError_t e_ = (call);                                                     \
    if (e_ != cudaSuccess) {                                                     \
      std::fprintf(stderr, "known_work: %s: %s\n", #call, cudaGetErrorString(e_)); \
      return 1;                                                                  \
    }                                                                            \
  } while (0)

__global__ void ct_copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
  size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = in[i];
}

__global__ void ct_fma_kernel(float* out, int iters, float b, float c) {
  float a0 = threadIdx.x, a1 = a0 + 1.f, a2 = a0 + 2.f, a3 = a0 + 3.f;
  for (int i = 0; i < iters; ++i) {
    a0 = fmaf(a0, b, c);
    a1 = fmaf(a1, b, c);
    a2 = fmaf(a2, b, c);
    a3 = fmaf(a3, b, c);
  }
  out[static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = (a0 + a1) + (a2 + a3);
}

__global__ void ct_smem_kernel(float* out) {
  extern __shared__ float tile[];
  tile[threadIdx.x] = static_cast<float>(threadIdx.x);
  __syncthreads();
  out[static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x] =
      tile[(threadIdx.x + 1) % blockDim.x];
}

__global__ void ct_tiny_block_kernel(float* out) {
  out[static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = static_cast<float>(blockIdx.x);
}

int main(int argc, char** argv) {
  size_t mib = 2048;
  int iters = 1024;
  const char* truth = nullptr;
  bool occupancy_kernels = false;
  int phases = 0;   // --phases N: N sequential "phase" ranges of two copies each, instead of the rest
  int repeat = 0;   // --repeat K: K launches each of the copy and FMA kernels, interleaved, instead
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--occupancy-kernels")) {
      occupancy_kernels = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "known_work: %s needs a value\n", argv[i]);
      return 2;
    }
    if (!std::strcmp(argv[i], "--mib")) mib = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--truth")) truth = argv[i + 1];
    else if (!std::strcmp(argv[i], "--phases")) phases = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--repeat")) repeat = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr,
                   "usage: ct_known_work [--mib N] [--iters N] [--truth FILE] [--occupancy-kernels] "
                   "[--phases N | --repeat K]\n");
      return 2;
    }
    ++i;
  }
  const size_t bytes = mib << 20;
  const size_t n4 = bytes / sizeof(float4);
  const int fma_blocks = 1024, fma_threads = 256;
  const int copy_launches = 2, fma_launches = 3;

  float4 *in = nullptr, *out = nullptr;
  float* fout = nullptr;
  CHECK(cudaMalloc(&in, bytes));
  CHECK(cudaMalloc(&out, bytes));
  CHECK(cudaMalloc(&fout, sizeof(float) * fma_blocks * fma_threads));
  CHECK(cudaMemset(in, 1, bytes));
  CHECK(cudaMemset(out, 0, bytes));
  CHECK(cudaDeviceSynchronize());

  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  if (phases > 0 || repeat > 0) {
    // Issue 20's cases: NVTX-scope counters per range instance (each phase
    // reads 2 x bytes, with a nested range inside), and launch selection by
    // index (launch k of each kernel is its k-th).
    for (int p = 0; p < phases; ++p) {
      nvtxRangePushA("phase");
      nvtxRangePushA("copy");
      for (int r = 0; r < 2; ++r) ct_copy_kernel<<<sms * 8, 256>>>(in, out, n4);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
      nvtxRangePop();
      nvtxRangePop();
    }
    for (int k = 0; k < repeat; ++k) {
      ct_copy_kernel<<<sms * 8, 256>>>(in, out, n4);
      ct_fma_kernel<<<fma_blocks, fma_threads>>>(fout, iters, 0.999f, 0.001f);
      CHECK(cudaGetLastError());
    }
    CHECK(cudaDeviceSynchronize());
    if (truth) {
      FILE* f = std::fopen(truth, "w");
      if (!f) return 1;
      std::fprintf(f, "{\"phases\": %d, \"phase_read_bytes\": %zu, \"repeat\": %d}\n", phases, 2 * bytes,
                   repeat);
      std::fclose(f);
    }
    std::printf("known_work: %d phases of 2 x %zu bytes, %d repeats\n", phases, bytes, repeat);
    return 0;
  }
  nvtxRangePushA("copy_phase");
  for (int r = 0; r < copy_launches; ++r) {
    ct_copy_kernel<<<sms * 8, 256>>>(in, out, n4);
    CHECK(cudaGetLastError());
  }
  CHECK(cudaDeviceSynchronize());
  nvtxRangePop();
  nvtxRangePushA("fma_phase");
  for (int r = 0; r < fma_launches; ++r) {
    ct_fma_kernel<<<fma_blocks, fma_threads>>>(fout, iters, 0.999f, 0.001f);
    CHECK(cudaGetLastError());
  }
  CHECK(cudaDeviceSynchronize());
  nvtxRangePop();

  if (occupancy_kernels) {
    const int smem_bytes = 64 << 10, smem_blocks = 256, smem_threads = 256;
    const int tiny_blocks = 8192, tiny_threads = 32;
    CHECK(cudaFuncSetAttribute(ct_smem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               smem_bytes));
    // Two launches of each, back to back: under --kernel-sample 2 one of each
    // pair is counted and the other timed (with its launch configuration).
    for (int r = 0; r < 2; ++r) {
      ct_smem_kernel<<<smem_blocks, smem_threads, smem_bytes>>>(fout);
      CHECK(cudaGetLastError());
    }
    for (int r = 0; r < 2; ++r) {
      ct_tiny_block_kernel<<<tiny_blocks, tiny_threads>>>(fout);
      CHECK(cudaGetLastError());
    }
    CHECK(cudaDeviceSynchronize());
  }

  const double ffma = 4.0 * iters * fma_blocks * fma_threads;
  if (truth) {
    FILE* f = std::fopen(truth, "w");
    if (!f) return 1;
    std::fprintf(f,
                 "{\"copy_bytes\": %zu, \"copy_launches\": %d, \"ffma_per_launch\": %.0f, "
                 "\"fma_launches\": %d, \"fma_out_bytes\": %zu, "
                 "\"ranges\": {\"copy_phase\": [\"ct_copy_kernel\", %d], "
                 "\"fma_phase\": [\"ct_fma_kernel\", %d]}}\n",
                 bytes, copy_launches, ffma, fma_launches, sizeof(float) * fma_blocks * fma_threads,
                 copy_launches, fma_launches);
    std::fclose(f);
  }
  std::printf("known_work: copied %zu bytes x%d, %.0f FFMA x%d\n", bytes, copy_launches, ffma,
              fma_launches);
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  CHECK(cudaFree(fout));
  return 0;
}
