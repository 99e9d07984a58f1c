// FakeCupti: a CuptiApi (injection/cupti/cupti_api.h) for unit tests, in the spirit
// of Kineto's CuptiActivityApi mocks. It records every call in order,
// captures the buffer callbacks so tests drive the real BufferRequested /
// BufferCompleted, walks buffers built with testing::BufferWriter, and can
// be told to fail chosen calls.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "injection/cupti/cupti_api.h"
#include "injection/testing/fake_activity_buffer.h"

namespace cutrace::injection::testing {

class FakeCupti : public CuptiApi {
 public:
  // Knobs (set before Session::Start).
  uint32_t version = CUPTI_API_VERSION;
  CUptiResult subscribe_result = CUPTI_SUCCESS;
  std::string other_subscriber;
  bool has_timestamp_callback = true;
  bool has_per_api_enable = true;
  bool has_enable_domain = true;
  bool moving_timestamps = false;  // cuptiGetTimestamp: the time now, not 1000
  std::set<CUpti_ActivityKind> failing_kinds;
  size_t dropped_per_buffer = 0;
  // Called inside ActivityFlushAll (to deliver buffers as CUPTI would).
  std::function<void()> on_flush;
  // Called inside Finalize, before it drops anything (CUPTI handing a buffer back then).
  std::function<void()> on_finalize;
  // Called inside EnableDomain (e.g. another thread's API exit meanwhile).
  std::function<void(uint32_t enable, CUpti_CallbackDomain domain)> on_enable_domain;
  std::map<uint32_t, std::string> runtime_names = {
      {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel_v7000"},
      {CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy_v3020"},
      {CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, "cudaGetDevice_v3020"},
      {CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, "cudaStreamSynchronize_v3020"},
  };
  std::map<uint32_t, std::string> driver_names = {
      {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel"},
      {CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice, "cuCtxGetDevice"},
  };

  // Observations.
  std::vector<std::string> calls;
  std::vector<CUpti_ActivityKind> enabled_kinds;  // every cuptiActivityEnable, in order
  std::set<uint32_t> enabled_runtime_cbids;
  std::set<uint32_t> enabled_driver_cbids;
  CUpti_BuffersCallbackRequestFunc requested = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed = nullptr;
  CUpti_TimestampCallbackFunc timestamp_fn = nullptr;
  std::atomic<int> flushes{0};  // the control thread flushes too
  std::atomic<int> queries{0};  // calls not kept in `calls` (see Query())
  int finalizes = 0;
  CUpti_CallbackFunc callback = nullptr;  // the subscriber's
  bool unsubscribed = false;
  bool program_client = false;  // ProgramHasOwnClient()
  // CUPTI 13.0 as measured on the H200 (issue 20): a per-call API enable
  // (cuptiActivityEnableRuntimeApi/DriverApi(cbid, 1)) made once CUDA runs
  // returns CUPTI_SUCCESS and records nothing; one made before (the
  // session's Start, inside cuInit) records. The fixture sets this after
  // Start. RecordsApi() says whether a call would give a record.
  std::atomic<bool> cuda_running{false};

  CUptiResult GetVersion(uint32_t* v) override {
    Note("cuptiGetVersion");
    *v = version;
    return CUPTI_SUCCESS;
  }
  CUptiResult Subscribe(CUpti_SubscriberHandle* s, CUpti_CallbackFunc fn, void*, const char* name,
                        std::string* other) override {
    Note(std::string("cuptiSubscribe_v2:") + (name ? name : ""));
    if (subscribe_result != CUPTI_SUCCESS) {
      if (other) *other = other_subscriber;
      return subscribe_result;
    }
    *s = reinterpret_cast<CUpti_SubscriberHandle>(this);
    std::lock_guard<std::mutex> lock(mu_);
    callback = fn;
    return CUPTI_SUCCESS;
  }
  CUptiResult EnableDomain(uint32_t enable, CUpti_SubscriberHandle, CUpti_CallbackDomain domain) override {
    Note("cuptiEnableDomain:" + std::to_string(enable) + ":" + std::to_string(domain));
    if (on_enable_domain) on_enable_domain(enable, domain);
    return has_enable_domain ? CUPTI_SUCCESS : CUPTI_ERROR_NOT_SUPPORTED;
  }
  // cuptiFinalize as CUPTI does it: everything subscribed, registered or
  // enabled is gone; the next call (any) attaches again.
  CUptiResult Finalize() override {
    Note("cuptiFinalize");
    if (on_finalize) on_finalize();
    std::lock_guard<std::mutex> lock(mu_);
    detached_ = true;
    ++finalizes;
    kinds_on_.clear();
    enabled_runtime_cbids.clear();
    enabled_driver_cbids.clear();
    recording_runtime_cbids_.clear();
    recording_driver_cbids_.clear();
    requested = nullptr;
    completed = nullptr;
    timestamp_fn = nullptr;
    callback = nullptr;
    return CUPTI_SUCCESS;
  }
  // The subscriber callback at an API call's exit (or entry), as CUPTI calls it.
  void CallApi(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site) {
    CUpti_CallbackData data;
    std::memset(&data, 0, sizeof(data));
    data.callbackSite = site;
    CUpti_CallbackFunc fn = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      fn = callback;
    }
    if (fn != nullptr) fn(nullptr, domain, cbid, &data);
  }
  bool detached() {
    std::lock_guard<std::mutex> lock(mu_);
    return detached_;
  }
  // Calls that reached CUPTI while it was detached (the first attaches it again).
  std::vector<std::string> CallsWhileDetached() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_while_detached_;
  }
  // A consistent copy of `calls`.
  std::vector<std::string> Calls() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls;
  }
  CUptiResult Unsubscribe(CUpti_SubscriberHandle) override {
    Note("cuptiUnsubscribe");
    unsubscribed = true;
    return CUPTI_SUCCESS;
  }
  CUptiResult EnableCallback(uint32_t enable, CUpti_SubscriberHandle, CUpti_CallbackDomain domain,
                             CUpti_CallbackId cbid) override {
    Note("cuptiEnableCallback:" + std::to_string(enable) + ":" + std::to_string(domain) + ":" +
         std::to_string(cbid));
    return CUPTI_SUCCESS;
  }
  bool ProgramHasOwnClient() const override { return program_client; }
  CUptiResult ActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r,
                                        CUpti_BuffersCallbackCompleteFunc c) override {
    Note("cuptiActivityRegisterCallbacks");
    requested = r;
    completed = c;
    return CUPTI_SUCCESS;
  }
  CUptiResult ActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn) override {
    Note("cuptiActivityRegisterTimestampCallback");
    if (!has_timestamp_callback) return CUPTI_ERROR_NOT_SUPPORTED;
    timestamp_fn = fn;
    return CUPTI_SUCCESS;
  }
  CUptiResult SetThreadIdType(CUpti_ActivityThreadIdType) override {
    Note("cuptiSetThreadIdType");
    return CUPTI_SUCCESS;
  }
  CUptiResult ActivitySetAttribute(CUpti_ActivityAttribute, size_t*, void*) override {
    Note("cuptiActivitySetAttribute");
    return CUPTI_SUCCESS;
  }
  CUptiResult ActivityFlushPeriod(uint32_t) override {
    Note("cuptiActivityFlushPeriod");
    return CUPTI_SUCCESS;
  }
  CUptiResult ActivityEnable(CUpti_ActivityKind kind) override {
    Note("cuptiActivityEnable:" + std::to_string(static_cast<int>(kind)));
    if (failing_kinds.count(kind)) return CUPTI_ERROR_NOT_SUPPORTED;
    std::lock_guard<std::mutex> lock(mu_);
    enabled_kinds.push_back(kind);
    kinds_on_.insert(kind);
    ForgetPerCall(kind);
    return CUPTI_SUCCESS;
  }
  CUptiResult ActivityDisable(CUpti_ActivityKind kind) override {
    Note("cuptiActivityDisable:" + std::to_string(static_cast<int>(kind)));
    std::lock_guard<std::mutex> lock(mu_);
    kinds_on_.erase(kind);
    ForgetPerCall(kind);
    return CUPTI_SUCCESS;
  }
  CUptiResult ActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) override {
    Query("cuptiActivityEnableRuntimeApi");
    return EnablePerCall(cbid, enable, &enabled_runtime_cbids, &recording_runtime_cbids_);
  }
  CUptiResult ActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) override {
    Query("cuptiActivityEnableDriverApi");
    return EnablePerCall(cbid, enable, &enabled_driver_cbids, &recording_driver_cbids_);
  }
  // The kinds on now (enabled and not disabled since), and the API calls
  // recorded now: a consistent copy, safe while cutrace's threads switch them.
  std::set<CUpti_ActivityKind> KindsOn() {
    std::lock_guard<std::mutex> lock(mu_);
    return kinds_on_;
  }
  // Whether a call of `kind` (RUNTIME or DRIVER) with this id gives an
  // activity record now: its whole kind is on, or its per-call enable took.
  bool RecordsApi(CUpti_ActivityKind kind, uint32_t cbid) {
    std::lock_guard<std::mutex> lock(mu_);
    if (kinds_on_.count(kind)) return true;
    const auto& per_call = kind == CUPTI_ACTIVITY_KIND_RUNTIME ? recording_runtime_cbids_ : recording_driver_cbids_;
    return per_call.count(cbid) == 1;
  }
  size_t ApiCallsOn() {
    std::lock_guard<std::mutex> lock(mu_);
    return enabled_runtime_cbids.size() + enabled_driver_cbids.size();
  }
  CUptiResult ActivityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) override {
    return NextRecord(buffer, valid, record);
  }
  CUptiResult ActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) override {
    Query("cuptiActivityGetNumDroppedRecords");
    *dropped = dropped_per_buffer;
    return CUPTI_SUCCESS;
  }
  CUptiResult ActivityFlushAll(uint32_t flag) override {
    Note("cuptiActivityFlushAll:" + std::to_string(flag));
    ++flushes;
    if (on_flush) on_flush();
    return CUPTI_SUCCESS;
  }
  CUptiResult GetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) override {
    const auto& table = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? runtime_names : driver_names;
    auto it = table.find(cbid);
    if (it == table.end()) return CUPTI_ERROR_INVALID_PARAMETER;
    *name = it->second.c_str();
    return CUPTI_SUCCESS;
  }
  CUptiResult GetTimestamp(uint64_t* t) override {
    Query("cuptiGetTimestamp");
    if (moving_timestamps) {
      *t = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
      return CUPTI_SUCCESS;
    }
    *t = 1000;
    return CUPTI_SUCCESS;
  }
  std::string ResultString(CUptiResult r) override { return "CUPTI_RESULT_" + std::to_string(r); }
  bool SynchronizeContext() override {
    Note("cuCtxSynchronize");
    return true;
  }
  // An NVTX call as CUPTI reports it to the subscriber.
  void CallNvtx(CUpti_CallbackId cbid, const void* params, const void* returned = nullptr) {
    CUpti_NvtxData data;
    data.functionName = "nvtx";
    data.functionParams = params;
    data.functionReturnValue = returned;
    CUpti_CallbackFunc fn = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      fn = callback;
    }
    if (fn != nullptr) fn(nullptr, CUPTI_CB_DOMAIN_NVTX, cbid, &data);
  }
  int DriverVersion() override { return 13000; }
  int RuntimeVersion() override { return 13000; }

  // Index of the first call starting with `prefix`, or -1.
  int IndexOf(const std::string& prefix) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < calls.size(); ++i) {
      if (calls[i].rfind(prefix, 0) == 0) return static_cast<int>(i);
    }
    return -1;
  }

 private:
  // Calls not kept in `calls` (too many, or queries): still seen when detached.
  void Query(const char* call) {
    queries.fetch_add(1);
    std::lock_guard<std::mutex> lock(mu_);
    if (detached_) {
      calls_while_detached_.push_back(call);
      detached_ = false;
    }
  }
  void Note(std::string call) {
    std::lock_guard<std::mutex> lock(mu_);
    if (detached_) {
      calls_while_detached_.push_back(call);
      detached_ = false;
    }
    calls.push_back(std::move(call));
  }
  // A per-call enable of the runtime or the driver API: `enabled` keeps
  // every id switched on, `recording` those that give records (see
  // cuda_running).
  CUptiResult EnablePerCall(CUpti_CallbackId cbid, uint8_t enable, std::set<uint32_t>* enabled,
                            std::set<uint32_t>* recording) {
    if (!has_per_api_enable) return CUPTI_ERROR_NOT_SUPPORTED;
    std::lock_guard<std::mutex> lock(mu_);
    if (enable) {
      enabled->insert(cbid);
      if (!cuda_running.load()) recording->insert(cbid);
    } else {
      enabled->erase(cbid);
      recording->erase(cbid);
    }
    return CUPTI_SUCCESS;
  }
  // The kind switched on or off after per-call enables overrides them
  // (cupti_activity.h); the caller holds mu_.
  void ForgetPerCall(CUpti_ActivityKind kind) {
    if (kind == CUPTI_ACTIVITY_KIND_RUNTIME) recording_runtime_cbids_.clear();
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER) recording_driver_cbids_.clear();
  }
  mutable std::mutex mu_;
  std::set<uint32_t> recording_runtime_cbids_;  // per-call enables that record
  std::set<uint32_t> recording_driver_cbids_;
  bool detached_ = false;
  std::vector<std::string> calls_while_detached_;
  std::set<CUpti_ActivityKind> kinds_on_;
};

}  // namespace cutrace::injection::testing
