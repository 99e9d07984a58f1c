// CuptiApi: the seam between cutrace and CUPTI. Every CUPTI (and the two
// CUDA version) calls the library makes go through this interface, so unit
// tests drive the real buffer callbacks and record conversion with a fake
// (tests/unit/injection_fake_cupti.h) and no GPU. The production
// implementation, DlCuptiApi (injection/cupti/cupti_loader.h), dlopen()s libcupti,
// so the injected library has no link-time dependency on CUDA.
//
// Threads: implementations must be callable from any thread, as CUPTI's own
// functions are. Optional entry points (absent from older libcupti) return
// CUPTI_ERROR_NOT_SUPPORTED.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <string>

namespace cutrace::injection {

class CuptiApi {
 public:
  virtual ~CuptiApi() = default;

  virtual CUptiResult GetVersion(uint32_t* version) = 0;
  // cuptiSubscribe_v2 (name given, other subscriber's name returned on
  // CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) where the library has it,
  // else cuptiSubscribe (then *other_subscriber stays empty).
  virtual CUptiResult Subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                void* userdata, const char* name,
                                std::string* other_subscriber) = 0;
  virtual CUptiResult Unsubscribe(CUpti_SubscriberHandle subscriber) = 0;
  // cuptiEnableCallback on the session's subscriber (the module-unload flush).
  virtual CUptiResult EnableCallback(uint32_t /*enable*/, CUpti_SubscriberHandle /*subscriber*/,
                                     CUpti_CallbackDomain /*domain*/, CUpti_CallbackId /*cbid*/) {
    return CUPTI_ERROR_NOT_SUPPORTED;
  }
  // cuptiEnableDomain on the session's subscriber: continuous mode turns a
  // whole API domain's callbacks on to detach from the next call's exit.
  virtual CUptiResult EnableDomain(uint32_t /*enable*/, CUpti_SubscriberHandle /*subscriber*/,
                                   CUpti_CallbackDomain /*domain*/) {
    return CUPTI_ERROR_NOT_SUPPORTED;
  }
  // cuptiFinalize: CUPTI detaches from the process (its documented way to
  // drop the cost that kinds once enabled on a live context keep adding to
  // every launch after they are disabled). Any later CUPTI call attaches it
  // again, with nothing subscribed, registered or enabled.
  virtual CUptiResult Finalize() { return CUPTI_ERROR_NOT_SUPPORTED; }
  // True when the program carries a CUPTI client of its own that may start
  // later (its own libcupti was loaded before cutrace's, or a framework with
  // a built-in profiler, such as PyTorch's Kineto, is in the process). CUPTI
  // takes one subscriber, so cutrace then holds none unless counters need it.
  virtual bool ProgramHasOwnClient() const { return false; }
  // The address of one of libcupti's functions (dlsym), for the watch on the
  // program's own client (session/client_handover.cc); nullptr where unknown.
  virtual void* EntryPoint(const char* /*name*/) { return nullptr; }
  virtual CUptiResult ActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                CUpti_BuffersCallbackCompleteFunc completed) = 0;
  virtual CUptiResult ActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn) = 0;
  virtual CUptiResult SetThreadIdType(CUpti_ActivityThreadIdType type) = 0;
  virtual CUptiResult ActivitySetAttribute(CUpti_ActivityAttribute attr, size_t* value_size,
                                           void* value) = 0;
  virtual CUptiResult ActivityFlushPeriod(uint32_t ms) = 0;
  virtual CUptiResult ActivityEnable(CUpti_ActivityKind kind) = 0;
  // Continuous mode turns kinds off between windows (injection/production/production_controller.h).
  virtual CUptiResult ActivityDisable(CUpti_ActivityKind /*kind*/) { return CUPTI_ERROR_NOT_SUPPORTED; }
  // cuptiActivityEnableLatencyTimestamps; optional (only CUTRACE_LATENCY_TIMESTAMPS=1 calls it).
  virtual CUptiResult ActivityEnableLatencyTimestamps(uint8_t /*enable*/) {
    return CUPTI_ERROR_NOT_SUPPORTED;
  }
  virtual CUptiResult ActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) = 0;
  virtual CUptiResult ActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) = 0;
  virtual CUptiResult ActivityGetNextRecord(uint8_t* buffer, size_t valid_bytes,
                                            CUpti_Activity** record) = 0;
  virtual CUptiResult ActivityGetNumDroppedRecords(CUcontext context, uint32_t stream_id,
                                                   size_t* dropped) = 0;
  virtual CUptiResult ActivityFlushAll(uint32_t flag) = 0;
  virtual CUptiResult GetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                      const char** name) = 0;
  virtual CUptiResult GetTimestamp(uint64_t* timestamp) = 0;
  // A printable name for `result` (never null).
  virtual std::string ResultString(CUptiResult result) = 0;

  // cuDriverGetVersion / cudaRuntimeGetVersion, where reachable without
  // initialising anything; 0 when unknown.
  virtual int DriverVersion() = 0;
  virtual int RuntimeVersion() = 0;
  // cuCtxSynchronize on the calling thread's context (capture ranges wait
  // for a range's GPU work at its end); false when not done.
  virtual bool SynchronizeContext() { return false; }
};

}  // namespace cutrace::injection
