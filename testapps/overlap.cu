// overlap: long kernels on one stream while pinned H2D/D2H copies run on
// another, so nearly all copy time overlaps compute. Truth: the overlap must
// exceed a stated fraction of the copy time.
#include <cstring>
#include <memory>

#include "testapps/common/testapp.h"

__global__ void spin_kernel(unsigned long long ns) {
  if (threadIdx.x == 0) ct::SpinNs(ns);
}

int main(int argc, char** argv) {
  ct::Args args(argc, argv, "overlap", "pinned copies on one stream overlapping kernels on another");
  const long kernels = args.Int("kernels", 2, "spin kernels on the compute stream", 1);
  const long kernel_us = args.Int("kernel-us", 20000, "duration of each spin kernel", 1);
  const long copies = args.Int("copies", 8, "H2D copies, and as many D2H copies", 1);
  const long copy_mib = args.Int("copy-mib", 16, "size of each copy in MiB", 1);
  const std::string truth_path = args.Finish({"spin_kernel(unsigned long long)"});

  const size_t bytes = static_cast<size_t>(copy_mib) << 20;
  void* host = nullptr;
  void* dev = nullptr;
  CT_CHECK(cudaMallocHost(&host, bytes));
  CT_CHECK(cudaMalloc(&dev, bytes));
  std::memset(host, 1, bytes);
  cudaStream_t compute, copy;
  CT_CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  CT_CHECK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));

  // The kernels go first so the copies, issued right after, run under them.
  std::vector<std::unique_ptr<ct::EventTimer>> kernel_timers;
  for (long i = 0; i < kernels; ++i) {
    kernel_timers.push_back(std::make_unique<ct::EventTimer>());
    kernel_timers.back()->Start(compute);
    spin_kernel<<<1, 32, 0, compute>>>(static_cast<unsigned long long>(kernel_us) * 1000ull);
    CT_CHECK_LAUNCH();
    kernel_timers.back()->Stop(compute);
  }
  ct::EventTimer copy_timer;
  copy_timer.Start(copy);
  for (long i = 0; i < copies; ++i) {
    CT_CHECK(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, copy));
    CT_CHECK(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, copy));
  }
  copy_timer.Stop(copy);
  CT_CHECK(cudaDeviceSynchronize());

  std::vector<int64_t> kernel_ns;
  for (auto& t : kernel_timers) kernel_ns.push_back(t->ElapsedNs());
  const int64_t copy_ns = copy_timer.ElapsedNs();

  ct::Truth truth("overlap");
  truth.Kernels("spin_kernel(unsigned long long)", kernels);
  truth.Copies("HtoD", copies, static_cast<int64_t>(bytes), false);
  truth.Copies("DtoH", copies, static_cast<int64_t>(bytes), false);
  truth.TimedKernels("spin_kernel(unsigned long long)", kernel_ns);
  // Copies take a few ms against tens of ms of kernels, so almost all of the
  // copy time is under a kernel; half is a safe floor.
  truth["overlap"] = {{"min_fraction_of_copy", 0.5}, {"copy_event_ns", copy_ns}};
  truth.Write(truth_path);

  CT_CHECK(cudaStreamDestroy(compute));
  CT_CHECK(cudaStreamDestroy(copy));
  CT_CHECK(cudaFree(dev));
  CT_CHECK(cudaFreeHost(host));
  ct::Say("overlap: %ld kernels, %ld copies of %ld MiB each way\n", kernels, copies, copy_mib);
  return 0;
}
