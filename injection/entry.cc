// The injected library's only exported symbol, InitializeInjection (called by
// the CUDA driver at cuInit when CUDA_INJECTION64_PATH names this library),
// and its load-time constructor (for LD_PRELOAD). Everything else is hidden
// (-fvisibility=hidden and injection/exports.map).
#include "injection/lifecycle.h"

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  return cutrace::injection::InitializeFromDriver();
}

namespace {
__attribute__((constructor)) void CutraceOnLoad() { cutrace::injection::OnLibraryLoad(); }
}  // namespace
