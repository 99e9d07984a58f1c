// idle_gaps: kernel, host sleeps S ms with the GPU idle, kernel, ... and no
// other GPU work, so the device has exactly I - 1 gaps, each at least S long.
// Every kernel is also timed with CUDA events, to check trace durations.
#include <memory>
#include <thread>

#include "testapps/common/testapp.h"

__global__ void gap_kernel(unsigned long long ns) {
  if (threadIdx.x == 0) ct::SpinNs(ns);
}

int main(int argc, char** argv) {
  ct::Args args(argc, argv, "idle_gaps", "kernels separated by host sleeps (known idle gaps)");
  const long iterations = args.Int("iterations", 6, "kernels (I); gaps are I - 1", 2);
  const long sleep_ms = args.Int("sleep-ms", 50, "host sleep between kernels (S)", 1);
  const long kernel_us = args.Int("kernel-us", 1000, "duration of each kernel", 1);
  const std::string truth_path = args.Finish({"gap_kernel(unsigned long long)"});

  cudaStream_t stream;
  CT_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<int64_t> kernel_ns;
  std::vector<int64_t> slept_ns;
  for (long i = 0; i < iterations; ++i) {
    ct::EventTimer timer;
    timer.Start(stream);
    gap_kernel<<<1, 32, 0, stream>>>(static_cast<unsigned long long>(kernel_us) * 1000ull);
    CT_CHECK_LAUNCH();
    timer.Stop(stream);
    CT_CHECK(cudaStreamSynchronize(stream));
    kernel_ns.push_back(timer.ElapsedNs());
    if (i + 1 < iterations) {
      const int64_t t0 = ct::NowNs();
      std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
      slept_ns.push_back(ct::NowNs() - t0);
    }
  }

  ct::Truth truth("idle_gaps");
  truth.Kernels("gap_kernel(unsigned long long)", iterations);
  // The stream is idle when each start event is recorded, so the events also
  // time the host's (post-sleep) launch: a loose bracket with a known floor.
  truth.TimedKernels("gap_kernel(unsigned long long)", kernel_ns, kernel_us * 1000);
  truth["gaps"] = {{"count", iterations - 1}, {"sleep_ns", sleep_ms * 1000000}, {"slept_ns", slept_ns}};
  truth.Write(truth_path);

  CT_CHECK(cudaStreamDestroy(stream));
  ct::Say("idle_gaps: %ld kernels, %ld ms sleeps\n", iterations, sleep_ms);
  return 0;
}
