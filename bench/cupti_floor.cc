// libcutrace_floor.so: the overhead floor for bench/overhead.py — the least a
// CUPTI activity tracer can do. Injected like cutrace (CUDA_INJECTION64_PATH),
// it enables the activity kinds cutrace enables by default, with the same
// per-call selection of runtime and driver API records (injection/api_filter),
// hands CUPTI plain malloc'd buffers, and on their return only counts the
// records in them. No conversion, no queue, no writer thread, no file, no
// timestamp callback: whatever cutrace costs above this floor is cutrace's own.
//
// CUTRACE_FLOOR_KINDS narrows what it enables, for overhead.py's breakdown of
// where CUPTI's cost goes: a comma list of kernel, memcpy, memset, nvtx, sync,
// runtime, driver, overhead, device (the device and context records, which
// come with any of the others: alone, what continuous mode leaves on between
// windows), or none (CUPTI attached, its buffer callbacks registered, nothing
// enabled). Unset: cutrace's defaults (collector/trace_kinds.h). An unknown word
// makes the floor enable nothing and say so on stderr.
//
// At exit it forces a flush and, if CUTRACE_FLOOR_REPORT names a file, writes
// one JSON line of counts there, so the bench can check that the floor saw
// what the program launched (a floor that records nothing would be no floor).
//
// Threads: CUPTI calls BufferRequested on application threads and
// BufferCompleted on its own worker thread (or in FlushAll); the counters are
// atomics, nothing else is shared.
#include <cupti.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "collector/list_items.h"
#include "collector/trace_kinds.h"
#include "injection/api_filter.h"

namespace {

constexpr size_t kBufferBytes = 2u << 20;  // cutrace's default CUTRACE_BUFFER_SIZE

std::atomic<uint64_t> g_records{0};
std::atomic<uint64_t> g_kernels{0};
std::atomic<uint64_t> g_buffers{0};
std::atomic<bool> g_started{false};

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  uint64_t records = 0, kernels = 0;
  CUpti_Activity* record = nullptr;
  while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    ++records;
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ++kernels;
  }
  g_records.fetch_add(records, std::memory_order_relaxed);
  g_kernels.fetch_add(kernels, std::memory_order_relaxed);
  g_buffers.fetch_add(1, std::memory_order_relaxed);
  std::free(buffer);
}

// The runtime or driver calls cutrace records (launch, copy, sync, allocation).
void EnableApi(bool runtime) {
  const CUpti_CallbackDomain domain = runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
  const uint32_t count = runtime ? static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE)
                                 : static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_SIZE);
  const auto api_domain = runtime ? cutrace::ApiDomain::kRuntime : cutrace::ApiDomain::kDriver;
  for (uint32_t cbid = 1; cbid < count; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    if (!cutrace::injection::IsTracedApi(api_domain, name)) continue;
    if (runtime) {
      cuptiActivityEnableRuntimeApi(cbid, 1);
    } else {
      cuptiActivityEnableDriverApi(cbid, 1);
    }
  }
}

struct FloorKinds {
  bool kernel, memcpy, memset, nvtx, sync, runtime, driver, overhead, device;
};
constexpr FloorKinds kNothing = {false, false, false, false, false, false, false, false, false};
// Unset CUTRACE_FLOOR_KINDS: what an unset CUTRACE_KINDS makes cutrace enable
// (collector/trace_kinds.h), so the floor follows cutrace's defaults.
FloorKinds CutraceDefaults() {
  const cutrace::Kinds d;
  return {d.kernel, d.memcpy, d.memset, d.nvtx, d.sync, d.runtime_api, d.driver_api, d.overhead, true};
}

// CUTRACE_FLOOR_KINDS (see the top of the file); false on an unknown word.
bool ParseFloorKinds(const char* env, FloorKinds* k) {
  if (env == nullptr || *env == '\0') return true;
  *k = kNothing;
  return cutrace::ForEachListItem(env, [k](std::string_view w) {
    if (w == "kernel") k->kernel = true;
    else if (w == "memcpy") k->memcpy = true;
    else if (w == "memset") k->memset = true;
    else if (w == "nvtx") k->nvtx = true;
    else if (w == "sync") k->sync = true;
    else if (w == "runtime") k->runtime = true;
    else if (w == "driver") k->driver = true;
    else if (w == "overhead") k->overhead = true;
    else if (w == "device") k->device = true;
    else if (w != "none") return false;
    return true;
  });
}

void AtExit() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped);
  const char* path = std::getenv("CUTRACE_FLOOR_REPORT");
  if (path == nullptr || *path == '\0') return;
  if (FILE* f = std::fopen(path, "w")) {
    std::fprintf(f, "{\"records\": %llu, \"kernels\": %llu, \"buffers\": %llu, \"dropped\": %zu}\n",
                 static_cast<unsigned long long>(g_records.load()),
                 static_cast<unsigned long long>(g_kernels.load()),
                 static_cast<unsigned long long>(g_buffers.load()), dropped);
    std::fclose(f);
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection() {
  if (g_started.exchange(true)) return 1;
  if (cuptiActivityRegisterCallbacks(&BufferRequested, &BufferCompleted) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "cutrace floor: cuptiActivityRegisterCallbacks failed\n");
    return 1;
  }
  FloorKinds k = CutraceDefaults();
  if (!ParseFloorKinds(std::getenv("CUTRACE_FLOOR_KINDS"), &k)) {
    std::fprintf(stderr, "cutrace floor: bad CUTRACE_FLOOR_KINDS %s; nothing enabled\n",
                 std::getenv("CUTRACE_FLOOR_KINDS"));
    k = kNothing;
  }
  const bool any = k.kernel || k.memcpy || k.memset || k.nvtx || k.sync || k.runtime || k.driver ||
                   k.overhead || k.device;
  const std::pair<bool, CUpti_ActivityKind> kinds[] = {
      {k.kernel, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL}, {k.memcpy, CUPTI_ACTIVITY_KIND_MEMCPY},
      {k.memcpy, CUPTI_ACTIVITY_KIND_MEMCPY2},           {k.memset, CUPTI_ACTIVITY_KIND_MEMSET},
      {k.nvtx, CUPTI_ACTIVITY_KIND_MARKER},              {k.nvtx, CUPTI_ACTIVITY_KIND_MARKER_DATA},
      {k.sync, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION},     {any, CUPTI_ACTIVITY_KIND_DEVICE},
      {any, CUPTI_ACTIVITY_KIND_CONTEXT},                {k.overhead, CUPTI_ACTIVITY_KIND_OVERHEAD}};
  for (const auto& [on, kind] : kinds) {
    if (on) cuptiActivityEnable(kind);
  }
  if (k.runtime) EnableApi(/*runtime=*/true);
  if (k.driver) EnableApi(/*runtime=*/false);
  std::atexit(&AtExit);
  return 1;
}
