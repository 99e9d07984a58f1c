// nvtx_nested: push/pop ranges nested three deep in the default domain and in
// a named domain, then start/end ranges in both, with kernels (and one memset)
// launched inside known ranges. Truth: one row per (domain, name, depth) with
// its count and the GPU operations launched inside its ranges.
//
// The two domains run one after the other, never interleaved, so each range's
// depth is the same whether a reader keeps one stack per thread or one per
// domain and thread. Start/end ranges are opened outside any push/pop range,
// so their depth is 0 either way.
#include <nvtx3/nvToolsExt.h>

#include "testapps/common/testapp.h"

// At namespace scope, not in the anonymous namespace: the truth names kernels
// as c++filt prints them, and "(anonymous namespace)::" would be part of it.
__global__ void nvtx_kernel(int* data, int n) {
  ct::ForElement(n, [=](int i) { data[i] += i; });
}

namespace {

constexpr const char* kDomain = "ct_domain";

nvtxEventAttributes_t Attributes(const char* message, uint32_t color) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = color;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message;
  return a;
}

int* g_data = nullptr;
constexpr int kN = 256;

void Launch(int times) {
  for (int i = 0; i < times; ++i) nvtx_kernel<<<1, kN>>>(g_data, kN);
  CT_CHECK_LAUNCH();
}

}  // namespace

int main(int argc, char** argv) {
  ct::Args args(argc, argv, "nvtx_nested", "nested NVTX ranges in two domains around kernels");
  const long loops = args.Int("loops", 4, "iterations of the default-domain nest", 1);
  const std::string truth_path = args.Finish({"nvtx_kernel(int*, int)"});
  const long domain_loops = loops + 1;  // different counts catch domains mixed up

  CT_CHECK(cudaMalloc(&g_data, kN * sizeof(int)));
  Launch(1);  // outside every range: CUDA is initialised before the first range
  CT_CHECK(cudaDeviceSynchronize());
  long kernels = 1;

  // Default domain: outer (1 kernel) > middle (1 kernel) > inner (2 kernels).
  for (long i = 0; i < loops; ++i) {
    nvtxRangePushA("outer");
    Launch(1);
    nvtxEventAttributes_t middle = Attributes("middle", 0xff00a0ff);
    nvtxRangePushEx(&middle);
    Launch(1);
    nvtxRangePushA("inner");
    Launch(2);
    nvtxRangePop();
    nvtxRangePop();
    nvtxRangePop();
    kernels += 4;
  }
  CT_CHECK(cudaDeviceSynchronize());

  // Named domain, the same names: outer (1) > middle (1) > inner (3).
  nvtxDomainHandle_t domain = nvtxDomainCreateA(kDomain);
  for (long i = 0; i < domain_loops; ++i) {
    nvtxEventAttributes_t outer = Attributes("outer", 0xffff0000);
    nvtxEventAttributes_t middle = Attributes("middle", 0xff00ff00);
    nvtxEventAttributes_t inner = Attributes("inner", 0xff0000ff);
    nvtxDomainRangePushEx(domain, &outer);
    Launch(1);
    nvtxDomainRangePushEx(domain, &middle);
    Launch(1);
    nvtxDomainRangePushEx(domain, &inner);
    Launch(3);
    nvtxDomainRangePop(domain);
    nvtxDomainRangePop(domain);
    nvtxDomainRangePop(domain);
    kernels += 5;
  }
  CT_CHECK(cudaDeviceSynchronize());

  // Start/end ranges: twice in the default domain (2 kernels and a memset
  // each), once in the named domain (1 kernel).
  for (int i = 0; i < 2; ++i) {
    nvtxEventAttributes_t se = Attributes("se_range", 0xffffff00);
    nvtxRangeId_t id = nvtxRangeStartEx(&se);
    Launch(2);
    CT_CHECK(cudaMemset(g_data, 0, kN * sizeof(int)));
    nvtxRangeEnd(id);
    kernels += 2;
  }
  {
    nvtxEventAttributes_t se = Attributes("se_domain_range", 0xff00ffff);
    nvtxRangeId_t id = nvtxDomainRangeStartEx(domain, &se);
    Launch(1);
    nvtxDomainRangeEnd(domain, id);
    kernels += 1;
  }
  CT_CHECK(cudaDeviceSynchronize());

  ct::Truth truth("nvtx_nested");
  truth.Kernels("nvtx_kernel(int*, int)", kernels);
  truth.Memsets(2, kN * sizeof(int));
  truth.Nvtx("default", "outer", 0, loops, 4 * loops);
  truth.Nvtx("default", "middle", 1, loops, 3 * loops);
  truth.Nvtx("default", "inner", 2, loops, 2 * loops);
  truth.Nvtx(kDomain, "outer", 0, domain_loops, 5 * domain_loops);
  truth.Nvtx(kDomain, "middle", 1, domain_loops, 4 * domain_loops);
  truth.Nvtx(kDomain, "inner", 2, domain_loops, 3 * domain_loops);
  truth.Nvtx("default", "se_range", 0, 2, 2 * 3);
  truth.Nvtx(kDomain, "se_domain_range", 0, 1, 1);
  truth.Write(truth_path);

  nvtxDomainDestroy(domain);
  CT_CHECK(cudaFree(g_data));
  ct::Say("nvtx_nested: %ld kernels in %ld + %ld nests and 3 start/end ranges\n", kernels, loops,
          domain_loops);
  return 0;
}
