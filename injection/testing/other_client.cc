// A stand-in for a program's own CUPTI client (torch.profiler's Kineto) in
// the lifecycle tests: a shared library linked against the fake libcupti, so
// its calls to cuptiActivityRegisterCallbacks go through its GOT, as
// Kineto's do. It registers its own buffer callbacks and counts the kernel
// records it gets back — only from buffers it handed out itself, as Kineto
// drops "unknown" buffers. other_client_stop() ends its profile as Kineto
// does, after which cutrace takes the activity API back.
#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <set>

namespace {

constexpr size_t kBufferBytes = 64 * 1024;
std::mutex g_mu;
std::set<uint8_t*> g_mine;  // guarded by g_mu
std::atomic<int> g_kernels{0};
std::atomic<int> g_unknown{0};

void CUPTIAPI Requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
  std::lock_guard<std::mutex> lock(g_mu);
  if (*buffer != nullptr) g_mine.insert(*buffer);
}

void CUPTIAPI Completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_mine.erase(buffer) == 0) {
      g_unknown.fetch_add(1);
      return;
    }
  }
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) g_kernels.fetch_add(1);
  }
  std::free(buffer);
}

}  // namespace

extern "C" {

// A clock of its own, far from cutrace's (Kineto's: TSC ticks).
uint64_t CUPTIAPI OwnClock() {
  static std::atomic<uint64_t> ticks{1000};
  return ticks.fetch_add(10);
}

__attribute__((visibility("default"))) int other_client_start() {
  // Kineto's order: its clock, then its buffers, then its kinds.
  if (cuptiActivityRegisterTimestampCallback(&OwnClock) != CUPTI_SUCCESS) return -1;
  if (cuptiActivityRegisterCallbacks(&Requested, &Completed) != CUPTI_SUCCESS) return -1;
  return cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS ? 0 : -1;
}

// As Kineto ends a profile: kernel records off, then a forced flush to get
// its buffers back.
__attribute__((visibility("default"))) int other_client_stop() {
  if (cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) return -1;
  return cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) == CUPTI_SUCCESS ? 0 : -1;
}

__attribute__((visibility("default"))) int other_client_kernels() { return g_kernels.load(); }
__attribute__((visibility("default"))) int other_client_unknown_buffers() { return g_unknown.load(); }

}  // extern "C"
