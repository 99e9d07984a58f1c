// A stand-in libcupti for tests of the injected library's process life on a
// machine without a GPU: CUTRACE_CUPTI_PATH points cutrace at this library,
// and a test program (lifecycle_app.cc) "launches kernels" through
// fake_cupti_launch(). It implements just the entry points cutrace resolves,
// delivers activity buffers from its own thread (as CUPTI's worker does) and
// from cuptiActivityFlushAll, and stamps records with the timestamp callback
// cutrace registers.
//
// Knobs (environment): FAKE_CUPTI_VERSION (default CUPTI_API_VERSION),
// FAKE_CUPTI_OTHER_SUBSCRIBER (subscribe fails as if that tool were active).
#include <cupti.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "injection/testing/fake_activity_buffer.h"

namespace {

using cutrace::injection::testing::BufferWriter;

std::mutex g_mu;
CUpti_BuffersCallbackRequestFunc g_requested = nullptr;
CUpti_BuffersCallbackCompleteFunc g_completed = nullptr;
CUpti_TimestampCallbackFunc g_timestamp = nullptr;
std::vector<CUpti_ActivityKernel10> g_pending;  // guarded by g_mu
uint32_t g_correlation = 0;                     // guarded by g_mu
bool g_kernels_enabled = false;

uint64_t Now() {
  if (g_timestamp != nullptr) return g_timestamp();
  static uint64_t fake = 1000000;
  return fake += 1000;
}

// Hands every pending record to cutrace in one buffer (on the calling thread).
void DeliverPending() {
  std::vector<CUpti_ActivityKernel10> records;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    records.swap(g_pending);
  }
  if (records.empty() || g_requested == nullptr || g_completed == nullptr) return;
  uint8_t* buffer = nullptr;
  size_t size = 0, max_records = 0;
  g_requested(&buffer, &size, &max_records);
  if (buffer == nullptr) return;  // refused: dropped, as CUPTI would
  BufferWriter w(buffer, size);
  for (const auto& r : records) w.Add(r);
  g_completed(nullptr, 0, buffer, size, w.used());
}

}  // namespace

extern "C" {

// Test hooks.
__attribute__((visibility("default"))) void fake_cupti_launch(const char* name, int count) {
  if (!g_kernels_enabled) return;
  std::lock_guard<std::mutex> lock(g_mu);
  for (int i = 0; i < count; ++i) {
    CUpti_ActivityKernel10 k;
    std::memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = Now();
    k.end = k.start + 500;
    k.correlationId = ++g_correlation;
    k.name = name;  // a string literal of the caller: lives as long as CUPTI's would
    k.gridX = k.gridY = k.gridZ = 1;
    k.blockX = k.blockY = k.blockZ = 1;
    k.clusterX = k.clusterY = k.clusterZ = 1;
    k.streamId = 7;
    g_pending.push_back(k);
  }
}

// Delivers pending records from another thread, as CUPTI's worker does.
__attribute__((visibility("default"))) void fake_cupti_deliver() {
  std::thread worker(&DeliverPending);
  worker.join();
}

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
  const char* v = std::getenv("FAKE_CUPTI_VERSION");
  *version = v ? static_cast<uint32_t>(std::strtoul(v, nullptr, 10)) : CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc, void*) {
  if (std::getenv("FAKE_CUPTI_OTHER_SUBSCRIBER")) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&g_mu);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc cb,
                                       void* userdata, CUpti_SubscriberParams* params) {
  const char* other = std::getenv("FAKE_CUPTI_OTHER_SUBSCRIBER");
  if (other != nullptr) {
    if (params != nullptr && params->oldSubscriberName != nullptr && params->oldSubscriberSize > 0) {
      std::strncpy(params->oldSubscriberName, other, params->oldSubscriberSize - 1);
      params->oldSubscriberName[params->oldSubscriberSize - 1] = '\0';
    }
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  return cuptiSubscribe(subscriber, cb, userdata);
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle) { return CUPTI_SUCCESS; }

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                    CUpti_BuffersCallbackCompleteFunc completed) {
  g_requested = requested;
  g_completed = completed;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn) {
  g_timestamp = fn;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType) { return CUPTI_SUCCESS; }

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) g_kernels_enabled = true;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
  if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) g_kernels_enabled = false;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId, uint8_t) { return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId, uint8_t) { return CUPTI_SUCCESS; }

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  return cutrace::injection::testing::NextRecord(buffer, valid, record);
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  *dropped = 0;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t) {
  DeliverPending();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) {
    *name = "cudaLaunchKernel_v7000";
    return CUPTI_SUCCESS;
  }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* timestamp) {
  *timestamp = Now();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  *str = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "CUPTI_ERROR (fake)";
  return CUPTI_SUCCESS;
}

}  // extern "C"
