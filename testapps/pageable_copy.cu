// pageable_copy: the same sizes copied from pageable (malloc) and pinned
// (cudaMallocHost) host memory, both ways, plus device-to-device copies.
// Truth: count, bytes and pageable count per copy kind, exact.
#include <cstring>

#include "testapps/common/testapp.h"

int main(int argc, char** argv) {
  ct::Args args(argc, argv, "pageable_copy", "pageable vs pinned copies of known sizes");
  const long reps = args.Int("reps", 3, "repetitions of each size and kind", 1);
  const std::string truth_path = args.Finish({});

  const size_t sizes[] = {4u << 10, 256u << 10, 4u << 20};
  const size_t max_bytes = 4u << 20;
  void* pageable = std::malloc(max_bytes);
  if (!pageable) ct::Fail("malloc failed");
  std::memset(pageable, 7, max_bytes);
  void* pinned = nullptr;
  void* dev_a = nullptr;
  void* dev_b = nullptr;
  CT_CHECK(cudaMallocHost(&pinned, max_bytes));
  CT_CHECK(cudaMalloc(&dev_a, max_bytes));
  CT_CHECK(cudaMalloc(&dev_b, max_bytes));

  ct::Truth truth("pageable_copy");
  long total = 0;
  for (size_t bytes : sizes) {
    for (long r = 0; r < reps; ++r) {
      CT_CHECK(cudaMemcpy(dev_a, pageable, bytes, cudaMemcpyHostToDevice));
      CT_CHECK(cudaMemcpy(dev_a, pinned, bytes, cudaMemcpyHostToDevice));
      CT_CHECK(cudaMemcpy(dev_b, dev_a, bytes, cudaMemcpyDeviceToDevice));
      CT_CHECK(cudaMemcpy(pageable, dev_b, bytes, cudaMemcpyDeviceToHost));
      CT_CHECK(cudaMemcpy(pinned, dev_b, bytes, cudaMemcpyDeviceToHost));
      total += 5;
    }
    const auto b = static_cast<int64_t>(bytes);
    truth.Copies("HtoD", reps, b, true);
    truth.Copies("HtoD", reps, b, false);
    truth.Copies("DtoD", reps, b, false);
    truth.Copies("DtoH", reps, b, true);
    truth.Copies("DtoH", reps, b, false);
  }
  CT_CHECK(cudaDeviceSynchronize());
  truth.Write(truth_path);

  CT_CHECK(cudaFree(dev_a));
  CT_CHECK(cudaFree(dev_b));
  CT_CHECK(cudaFreeHost(pinned));
  std::free(pageable);
  ct::Say("pageable_copy: %ld copies\n", total);
  return 0;
}
