// multi_gpu: kernels and a copy on every visible GPU. With fewer than two it
// has nothing to test: it says "skipped: one GPU" in its truth and exits 0.
#include "testapps/common/testapp.h"

__global__ void device_kernel(int* data, int n) {
  ct::ForElement(n, [=](int i) { data[i] = i; });
}

int main(int argc, char** argv) {
  ct::Args args(argc, argv, "multi_gpu", "kernels and a copy on every visible GPU");
  const long kernels = args.Int("kernels", 20, "kernels per device", 1);
  const std::string truth_path = args.Finish({"device_kernel(int*, int)"});

  int devices = 0;
  CT_CHECK(cudaGetDeviceCount(&devices));
  ct::Truth truth("multi_gpu");
  truth["device_count"] = devices;
  if (devices < 2) {
    truth["skipped"] = "one GPU";
    truth.Write(truth_path);
    ct::Say("multi_gpu: skipped: one GPU\n");
    return 0;
  }

  constexpr size_t kBytes = 1u << 20;
  constexpr int kN = 1024;
  void* host = nullptr;
  CT_CHECK(cudaHostAlloc(&host, kBytes, cudaHostAllocPortable));
  std::vector<void*> dev(devices);
  for (int d = 0; d < devices; ++d) {
    CT_CHECK(cudaSetDevice(d));
    CT_CHECK(cudaMalloc(&dev[d], kBytes));
    CT_CHECK(cudaMemcpy(dev[d], host, kBytes, cudaMemcpyHostToDevice));
    for (long k = 0; k < kernels; ++k) device_kernel<<<kN / 256, 256>>>(static_cast<int*>(dev[d]), kN);
    CT_CHECK_LAUNCH();
  }
  nlohmann::json used = nlohmann::json::array();
  for (int d = 0; d < devices; ++d) {
    CT_CHECK(cudaSetDevice(d));
    CT_CHECK(cudaDeviceSynchronize());
    CT_CHECK(cudaFree(dev[d]));
    used.push_back(d);
  }
  CT_CHECK(cudaFreeHost(host));

  truth.Kernels("device_kernel(int*, int)", kernels * devices);
  truth.Copies("HtoD", devices, kBytes, false);
  truth["devices_used"] = used;
  truth.Write(truth_path);
  ct::Say("multi_gpu: %d devices x %ld kernels\n", devices, kernels);
  return 0;
}
