// multi_thread: T host threads, each with its own stream and its own NVTX
// range, each launching M kernels and one pinned H2D copy.
#include <nvtx3/nvToolsExt.h>

#include <thread>

#include "testapps/common/testapp.h"

__global__ void thread_kernel(int* data, int n) {
  ct::ForElement(n, [=](int i) { data[i] += 1; });
}

int main(int argc, char** argv) {
  ct::Args args(argc, argv, "multi_thread", "T host threads, each on its own stream");
  const long threads = args.Int("threads", 4, "host threads (T)", 1);
  const long kernels = args.Int("kernels", 50, "kernels per thread (M)", 1);
  const std::string truth_path = args.Finish({"thread_kernel(int*, int)"});

  constexpr size_t kCopyBytes = 1u << 20;
  constexpr int kN = 1024;
  CT_CHECK(cudaSetDevice(0));
  std::vector<void*> host(threads), dev(threads);
  for (long t = 0; t < threads; ++t) {
    CT_CHECK(cudaMallocHost(&host[t], kCopyBytes));
    CT_CHECK(cudaMalloc(&dev[t], kCopyBytes));
  }

  std::vector<std::thread> workers;
  for (long t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      CT_CHECK(cudaSetDevice(0));
      cudaStream_t stream;
      CT_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      nvtxRangePushA("worker");
      CT_CHECK(cudaMemcpyAsync(dev[t], host[t], kCopyBytes, cudaMemcpyHostToDevice, stream));
      for (long k = 0; k < kernels; ++k) {
        thread_kernel<<<kN / 256, 256, 0, stream>>>(static_cast<int*>(dev[t]), kN);
      }
      CT_CHECK_LAUNCH();
      CT_CHECK(cudaStreamSynchronize(stream));
      nvtxRangePop();
      CT_CHECK(cudaStreamDestroy(stream));
    });
  }
  for (auto& w : workers) w.join();

  ct::Truth truth("multi_thread");
  truth.Kernels("thread_kernel(int*, int)", threads * kernels);
  truth.Copies("HtoD", threads, kCopyBytes, false);
  truth.Nvtx("default", "worker", 0, threads, threads * (kernels + 1));
  truth["threads"] = threads;
  truth.Write(truth_path);

  for (long t = 0; t < threads; ++t) {
    CT_CHECK(cudaFreeHost(host[t]));
    CT_CHECK(cudaFree(dev[t]));
  }
  ct::Say("multi_thread: %ld threads x %ld kernels\n", threads, kernels);
  return 0;
}
