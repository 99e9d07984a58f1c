// module_reload: loads a module from PTX with cuModuleLoadData, launches its
// kernel, unloads it, loads a second module, and then the first one again
// (a reload), launching each time. Kernel names must survive the unloads:
// CUPTI may reuse the memory of an unloaded module's names for the next one.
//
// The kernels live in PTX text below, not in this binary's fatbin, so
// --list-kernels prints nothing (there is no symbol to compare them with);
// the truth still names them exactly.
#include <cuda.h>

#include "testapps/common/testapp.h"

namespace {

// Two trivial kernels in PTX (JIT-compiled by the driver at load):
// data[threadIdx.x] = VALUE.
const char* ModulePtx(const char* name, int value) {
  static std::string text;
  text = std::string(R"(.version 8.0
.target sm_80
.address_size 64

.visible .entry )") + name + R"((.param .u64 data)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [data];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  mov.u32 %r2, )" + std::to_string(value) + R"(;
  st.global.u32 [%rd4], %r2;
  ret;
}
)";
  return text.c_str();
}

void CheckCu(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    cuGetErrorName(r, &name);
    ct::Fail(std::string(what) + " failed: " + (name ? name : "unknown CUresult"));
  }
}

// Loads `name` from PTX, launches it `launches` times, checks what it wrote, unloads it.
void LoadLaunchUnload(const char* name, int value, long launches, CUdeviceptr data) {
  CUmodule module = nullptr;
  CheckCu(cuModuleLoadData(&module, ModulePtx(name, value)), "cuModuleLoadData");
  CUfunction fn = nullptr;
  CheckCu(cuModuleGetFunction(&fn, module, name), "cuModuleGetFunction");
  void* params[] = {&data};
  for (long i = 0; i < launches; ++i) {
    CheckCu(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), "cuLaunchKernel");
  }
  CheckCu(cuCtxSynchronize(), "cuCtxSynchronize");
  int first = 0;
  CheckCu(cuMemcpyDtoH(&first, data, sizeof(first)), "cuMemcpyDtoH");
  if (first != value) ct::Fail(std::string(name) + " wrote " + std::to_string(first));
  CheckCu(cuModuleUnload(module), "cuModuleUnload");
}

}  // namespace

int main(int argc, char** argv) {
  ct::Args args(argc, argv, "module_reload", "PTX modules loaded, launched, unloaded and reloaded");
  const long launches = args.Int("launches", 50, "launches per loaded module", 1);
  const long cycles = args.Int("cycles", 3, "load/unload cycles of module A (B loads in between)", 1);
  const std::string truth_path = args.Finish({});

  CT_CHECK(cudaFree(nullptr));  // the runtime creates and sets the primary context
  CUdeviceptr data = 0;
  CheckCu(cuMemAlloc(&data, 32 * sizeof(int)), "cuMemAlloc");
  for (long c = 0; c < cycles; ++c) {
    LoadLaunchUnload("ct_module_a", 7, launches, data);
    LoadLaunchUnload("ct_module_b", 9, launches, data);
  }
  CheckCu(cuMemFree(data), "cuMemFree");

  ct::Truth truth("module_reload");
  truth.Kernels("ct_module_a", cycles * launches);
  truth.Kernels("ct_module_b", cycles * launches);
  // Each check reads 4 bytes back into a pageable int.
  truth.Copies("DtoH", 2 * cycles, sizeof(int), true);
  truth["module_loads"] = 2 * cycles;
  truth.Write(truth_path);
  ct::Say("module_reload: %ld cycles of 2 modules x %ld launches\n", cycles, launches);
  return 0;
}
