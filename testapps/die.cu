// die: launches kernels, waits for them, then ends abnormally: SIGKILL on
// itself (no handler of anyone's runs) or abort() (SIGABRT, which the tracer
// does not catch). Its trace cannot have an end marker; it must still read
// back up to its last complete packet, and say that it was cut short.
#include <signal.h>

#include <thread>

#include "testapps/common/testapp.h"

__global__ void die_kernel(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = i;
}

int main(int argc, char** argv) {
  ct::Args args(argc, argv, "die", "kernels, then SIGKILL or abort() on itself");
  const long kernels = args.Int("kernels", 200000, "kernels before dying");
  const long linger_ms = args.Int("linger-ms", 500, "sleep after the kernels, before dying");
  const std::string how = args.Str("how", "kill", "kill (SIGKILL) or abort (abort())");
  const std::string truth_path = args.Str("truth", "", "");
  args.Kernels({"die_kernel(int*, int)"});
  args.Finish();
  if (how != "kill" && how != "abort") ct::Fail("--how is kill or abort");
  const int sig = how == "kill" ? SIGKILL : SIGABRT;

  constexpr int kN = 32;
  int* data = nullptr;
  CT_CHECK(cudaMalloc(&data, kN * sizeof(int)));
  for (long i = 0; i < kernels; ++i) die_kernel<<<1, kN>>>(data, kN);
  CT_CHECK_LAUNCH();
  CT_CHECK(cudaDeviceSynchronize());

  ct::Truth truth("die");
  truth.Kernels("die_kernel(int*, int)", kernels);
  truth["signal"] = sig;
  truth["exit_status"] = 128 + sig;
  truth.Write(truth_path);
  ct::Say("die: %ld kernels, then %s\n", kernels, how == "kill" ? "SIGKILL" : "abort()");
  // Give the tracer's threads time to write what CUPTI has delivered.
  std::this_thread::sleep_for(std::chrono::milliseconds(linger_ms));
  if (how == "kill") raise(SIGKILL);
  std::abort();
}
