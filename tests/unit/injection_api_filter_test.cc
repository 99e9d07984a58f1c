// Which CUDA API calls are recorded, and how their names are written.
#include <gtest/gtest.h>

#include "injection/api_filter.h"

namespace cutrace::injection {
namespace {

TEST(InjectionApiFilterTest, RuntimeCallsThatExplainTimelines) {
  for (const char* name :
       {"cudaLaunchKernel_v7000", "cudaLaunchKernelExC_v11060", "cudaGraphLaunch_v10000",
        "cudaMemcpy_v3020", "cudaMemcpyAsync_ptsz_v7000", "cudaMemcpyPeerAsync_v4000",
        "cudaMemset_v3020", "cudaMemsetAsync_v3020", "cudaDeviceSynchronize_v3020",
        "cudaStreamSynchronize_v3020", "cudaEventSynchronize_v3020", "cudaStreamWaitEvent_v3020",
        "cudaMalloc_v3020", "cudaMallocHost_v3020", "cudaMallocAsync_v11020", "cudaFree_v3020",
        "cudaFreeHost_v3020", "cudaHostAlloc_v3020"}) {
    EXPECT_TRUE(IsTracedApi(ApiDomain::kRuntime, name)) << name;
  }
  for (const char* name : {"cudaGetDevice_v3020", "cudaGetLastError_v3020", "cudaStreamQuery_v3020",
                           "cudaEventQuery_v3020", "cudaSetDevice_v3020", "cudaEventRecord_v3020"}) {
    EXPECT_FALSE(IsTracedApi(ApiDomain::kRuntime, name)) << name;
  }
}

TEST(InjectionApiFilterTest, DriverCallsThatExplainTimelines) {
  for (const char* name : {"cuLaunchKernel", "cuLaunchKernelEx", "cuLaunchKernel_ptsz",
                           "cuGraphLaunch", "cuMemcpyHtoD_v2", "cuMemcpyAsync", "cuMemsetD8_v2",
                           "cuCtxSynchronize", "cuStreamSynchronize", "cuMemAlloc_v2",
                           "cuMemFree_v2", "cuMemAllocAsync", "cuStreamWaitEvent"}) {
    EXPECT_TRUE(IsTracedApi(ApiDomain::kDriver, name)) << name;
  }
  for (const char* name : {"cuCtxGetDevice", "cuDeviceGetAttribute", "cuGetProcAddress",
                           "cuStreamQuery", "cuModuleLoadData"}) {
    EXPECT_FALSE(IsTracedApi(ApiDomain::kDriver, name)) << name;
  }
  EXPECT_FALSE(IsTracedApi(ApiDomain::kOther, "cudaMemcpy"));
}

TEST(InjectionApiFilterTest, Names) {
  EXPECT_EQ(ApiBaseName("cudaMemcpyAsync_ptsz_v7000"), "cudaMemcpyAsync");
  EXPECT_EQ(ApiBaseName("cuMemcpyHtoD_v2"), "cuMemcpyHtoD");
  EXPECT_EQ(ApiBaseName("cuLaunchKernel"), "cuLaunchKernel");
  EXPECT_EQ(ApiDisplayName(ApiDomain::kRuntime, "cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(ApiDisplayName(ApiDomain::kRuntime, "cudaMallocAsync_v11020"), "cudaMallocAsync");
  EXPECT_EQ(ApiDisplayName(ApiDomain::kRuntime, "cudaMemcpyAsync_ptsz_v7000"), "cudaMemcpyAsync_ptsz");
  EXPECT_EQ(ApiDisplayName(ApiDomain::kDriver, "cuMemcpyHtoD_v2"), "cuMemcpyHtoD_v2");
}

}  // namespace
}  // namespace cutrace::injection
