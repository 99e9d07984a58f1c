// device_reset: launches kernels, calls cudaDeviceReset() (which destroys the
// primary context and everything in it), then uses the device again (a new
// context) and launches more kernels. Records of both contexts must reach the
// trace: CUPTI flushes the first context's records when it is destroyed.
#include "testapps/common/testapp.h"

__global__ void reset_kernel(int* data, int n) {
  ct::ForElement(n, [=](int i) { data[i] = i + 1; });
}

namespace {

// One round: allocate, launch `kernels` kernels, check the result, free.
void Round(long kernels) {
  constexpr int kN = 1024;
  int* data = nullptr;
  CT_CHECK(cudaMalloc(&data, kN * sizeof(int)));
  for (long i = 0; i < kernels; ++i) reset_kernel<<<kN / 256, 256>>>(data, kN);
  CT_CHECK_LAUNCH();
  int last = 0;
  CT_CHECK(cudaMemcpy(&last, data + kN - 1, sizeof(int), cudaMemcpyDeviceToHost));
  if (last != kN) ct::Fail("unexpected kernel result " + std::to_string(last));
  CT_CHECK(cudaFree(data));
}

}  // namespace

int main(int argc, char** argv) {
  ct::Args args(argc, argv, "device_reset", "kernels, cudaDeviceReset, then kernels again");
  const long before = args.Int("before", 100, "kernels before the reset", 1);
  const long after = args.Int("after", 100, "kernels after the reset", 1);
  const long resets = args.Int("resets", 2, "how many reset + re-initialise rounds", 1);
  const std::string truth_path = args.Finish({"reset_kernel(int*, int)"});

  Round(before);
  for (long r = 0; r < resets; ++r) {
    CT_CHECK(cudaDeviceReset());
    Round(after);
  }
  CT_CHECK(cudaDeviceSynchronize());

  ct::Truth truth("device_reset");
  truth.Kernels("reset_kernel(int*, int)", before + resets * after);
  // One 4-byte DtoH read-back per round.
  truth.Copies("DtoH", 1 + resets, sizeof(int), true);
  truth["resets"] = resets;
  truth.Write(truth_path);
  ct::Say("device_reset: %ld kernels, %ld resets, %ld kernels after each\n", before, resets, after);
  return 0;
}
