// load_storm: N tiny kernels launched from T host threads onto S streams
// (thread t launches on stream t % S), as fast as the threads can go; the
// load test of the tracer's buffers and writer queue. The truth holds the
// exact launch count, the wall time and the process's peak RSS, so a run
// under the tracer can be compared with a bare one.
#include <sys/resource.h>

#include <atomic>
#include <thread>

#include "testapps/common/testapp.h"

__global__ void load_kernel(int* data, int n) {
  ct::ForElement(n, [=](int i) { data[i] += 1; });
}

int main(int argc, char** argv) {
  ct::Args args(argc, argv, "load_storm", "N tiny kernels from T threads on S streams");
  const long n = args.Int("n", 1000000, "kernels launched in all", 1);
  const long threads = args.Int("threads", 16, "host threads (T)", 1);
  const long streams = args.Int("streams", 8, "CUDA streams (S)", 1);
  const std::string truth_path = args.Finish({"load_kernel(int*, int)"});

  constexpr int kN = 32;
  CT_CHECK(cudaSetDevice(0));
  std::vector<cudaStream_t> s(streams);
  std::vector<int*> data(streams);
  for (long i = 0; i < streams; ++i) {
    CT_CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    CT_CHECK(cudaMalloc(&data[i], kN * sizeof(int)));
    CT_CHECK(cudaMemset(data[i], 0, kN * sizeof(int)));
  }
  CT_CHECK(cudaDeviceSynchronize());

  std::atomic<int> ready{0};
  const int64_t t0 = ct::NowNs();
  std::vector<std::thread> workers;
  for (long t = 0; t < threads; ++t) {
    // The first n % threads threads launch one more, so the total is exactly n.
    const long mine = n / threads + (t < n % threads ? 1 : 0);
    workers.emplace_back([&, t, mine] {
      CT_CHECK(cudaSetDevice(0));
      const long k = t % streams;
      ready.fetch_add(1);
      for (long i = 0; i < mine; ++i) load_kernel<<<1, kN, 0, s[k]>>>(data[k], kN);
      CT_CHECK_LAUNCH();
    });
  }
  for (auto& w : workers) w.join();
  const int64_t t1 = ct::NowNs();
  CT_CHECK(cudaDeviceSynchronize());
  const int64_t t2 = ct::NowNs();

  // Every kernel added 1 to element 0 of its stream's array.
  long total = 0;
  for (long i = 0; i < streams; ++i) {
    int v = 0;
    CT_CHECK(cudaMemcpy(&v, data[i], sizeof(int), cudaMemcpyDeviceToHost));
    total += v;
  }
  if (total != n) ct::Fail("kernels counted on the GPU: " + std::to_string(total));

  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  ct::Truth truth("load_storm");
  truth.Kernels("load_kernel(int*, int)", n);
  truth.Copies("DtoH", streams, sizeof(int), true);
  truth.Memsets(streams, kN * sizeof(int));
  truth["load"] = {{"n", n},
                   {"threads", threads},
                   {"streams", streams},
                   {"launch_ns", t1 - t0},
                   {"launch_and_sync_ns", t2 - t0},
                   {"us_per_launch", static_cast<double>(t2 - t0) / 1e3 / static_cast<double>(n)},
                   {"peak_rss_bytes", static_cast<int64_t>(ru.ru_maxrss) * 1024}};
  truth.Write(truth_path);

  for (long i = 0; i < streams; ++i) {
    CT_CHECK(cudaFree(data[i]));
    CT_CHECK(cudaStreamDestroy(s[i]));
  }
  ct::Say("load_storm: %ld kernels from %ld threads on %ld streams\n", n, threads, streams);
  return 0;
}
