// memset: cudaMemset and cudaMemsetAsync of known sizes, and no kernels.
// Truth: memset count and bytes, exact.
#include "testapps/common/testapp.h"

int main(int argc, char** argv) {
  ct::Args args(argc, argv, "memset", "memsets of known sizes, synchronous and async");
  const long reps = args.Int("reps", 4, "repetitions of each size and call", 1);
  const std::string truth_path = args.Finish({});

  const size_t sizes[] = {1u << 10, 1u << 20, 16u << 20};
  void* dev = nullptr;
  CT_CHECK(cudaMalloc(&dev, 16u << 20));
  cudaStream_t stream;
  CT_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  ct::Truth truth("memset");
  long total = 0;
  for (size_t bytes : sizes) {
    for (long r = 0; r < reps; ++r) {
      CT_CHECK(cudaMemset(dev, static_cast<int>(r), bytes));
      CT_CHECK(cudaMemsetAsync(dev, 0xff, bytes, stream));
      total += 2;
    }
    truth.Memsets(2 * reps, static_cast<int64_t>(bytes));
  }
  CT_CHECK(cudaStreamSynchronize(stream));
  CT_CHECK(cudaDeviceSynchronize());
  truth.Write(truth_path);

  CT_CHECK(cudaStreamDestroy(stream));
  CT_CHECK(cudaFree(dev));
  ct::Say("memset: %ld memsets\n", total);
  return 0;
}
