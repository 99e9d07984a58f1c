// FakeProfiler: a ProfilerApi (injection/cupti/profiler_api.h) for the range
// profiler's unit tests: it records every call, can fail chosen ones, and
// with model_ranges adds up same-named user ranges within a pass as CUPTI
// does. Harness: a RangeProfiler over it, with helpers that make the
// program's launches and NVTX calls as CUPTI reports them.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

// Not guarded against a second inclusion: include it through this header only.
#include <generated_nvtx_meta.h>

#include "injection/counters/metrics_config.h"
#include "injection/counters/range_profiler.h"

namespace cutrace::injection::testing {

class FakeProfiler : public ProfilerApi {
 public:
  std::vector<std::string> calls;
  std::map<std::string, CUptiResult> fail;  // call name -> result
  std::vector<std::string> missing_metrics;
  size_t passes = 1;
  size_t ranges = 1;
  double value = 1234;
  std::string range_name = "step";
  int object_storage = 0, host_storage = 0;

  CUptiResult Call(const std::string& name) {
    calls.push_back(name);
    auto it = fail.find(name);
    return it == fail.end() ? CUPTI_SUCCESS : it->second;
  }
  CUptiResult ProfilerInitialize(CUpti_Profiler_Initialize_Params*) override { return Call("ProfilerInitialize"); }
  CUptiResult DeviceGetChipName(CUpti_Device_GetChipName_Params* p) override {
    p->pChipName = "GH100";
    return Call("DeviceGetChipName");
  }
  CUptiResult GetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params* p) override {
    if (p->pCounterAvailabilityImage == nullptr) p->counterAvailabilityImageSize = 16;
    return Call("GetCounterAvailability");
  }
  CUptiResult DeviceSupported(CUpti_Profiler_DeviceSupported_Params* p) override {
    p->isSupported = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
    return Call("DeviceSupported");
  }
  CUptiResult HostInitialize(CUpti_Profiler_Host_Initialize_Params* p) override {
    p->pHostObject = reinterpret_cast<CUpti_Profiler_Host_Object*>(&host_storage);
    return Call("HostInitialize");
  }
  CUptiResult HostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params*) override { return Call("HostDeinitialize"); }
  CUptiResult HostGetMetricProperties(CUpti_Profiler_Host_GetMetricProperties_Params* p) override {
    for (const std::string& m : missing_metrics)
      if (m == p->pMetricName) return CUPTI_ERROR_INVALID_METRIC_NAME;
    return CUPTI_SUCCESS;
  }
  CUptiResult HostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) override {
    added = p->numMetrics;
    return Call("HostConfigAddMetrics");
  }
  CUptiResult HostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) override {
    p->configImageSize = 32;
    return Call("HostGetConfigImageSize");
  }
  CUptiResult HostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params*) override { return Call("HostGetConfigImage"); }
  CUptiResult HostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) override {
    p->numOfPasses = passes;
    return Call("HostGetNumOfPasses");
  }
  CUptiResult HostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) override {
    for (size_t i = 0; i < p->numMetrics; ++i)
      p->pMetricValues[i] = (model_ranges ? model_sums_.at(p->rangeIndex) : value) + static_cast<double>(i);
    return Call("HostEvaluateToGpuValues");
  }
  CUptiResult Enable(CUpti_RangeProfiler_Enable_Params* p) override {
    p->pRangeProfilerObject = reinterpret_cast<CUpti_RangeProfiler_Object*>(&object_storage);
    return Call("Enable");
  }
  CUptiResult Disable(CUpti_RangeProfiler_Disable_Params*) override { return Call("Disable"); }
  CUptiResult GetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params* p) override {
    p->counterDataSize = 64;
    return Call("GetCounterDataSize");
  }
  CUptiResult CounterDataImageInitialize(CUpti_RangeProfiler_CounterDataImage_Initialize_Params*) override {
    model_names_.clear();  // a new pass
    model_sums_.clear();
    return Call("CounterDataImageInitialize");
  }
  CUptiResult SetConfig(CUpti_RangeProfiler_SetConfig_Params* p) override {
    range_mode = p->range;
    replay_mode = p->replayMode;
    return Call("SetConfig");
  }
  CUptiResult Start(CUpti_RangeProfiler_Start_Params*) override { return Call("Start"); }
  CUptiResult Stop(CUpti_RangeProfiler_Stop_Params* p) override {
    p->isAllPassSubmitted = 1;
    return Call("Stop");
  }
  CUptiResult PushRange(CUpti_RangeProfiler_PushRange_Params* p) override {
    pushed.push_back(p->pRangeName);
    if (model_ranges && depth_++ == 0) {
      // CUPTI's user ranges: one range per distinct name within a pass; the
      // counts of same-named ranges add up (what merged 10 ranges into one).
      auto it = std::find(model_names_.begin(), model_names_.end(), p->pRangeName);
      current_ = static_cast<size_t>(it - model_names_.begin());
      if (it == model_names_.end()) {
        model_names_.push_back(p->pRangeName);
        model_sums_.push_back(0);
      }
    }
    return Call("PushRange");
  }
  CUptiResult PopRange(CUpti_RangeProfiler_PopRange_Params*) override {
    // Each outermost instance does 1000 x its ordinal of work.
    if (model_ranges && --depth_ == 0) model_sums_[current_] += 1000.0 * static_cast<double>(++instances_done);
    return Call("PopRange");
  }
  CUptiResult DecodeData(CUpti_RangeProfiler_DecodeData_Params*) override { return Call("DecodeData"); }
  CUptiResult GetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params* p) override {
    p->numTotalRanges = model_ranges ? model_names_.size() : ranges;
    return Call("GetCounterDataInfo");
  }
  CUptiResult GetRangeInfo(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params* p) override {
    p->rangeName = model_ranges ? model_names_.at(p->rangeIndex).c_str() : range_name.c_str();
    return Call("GetRangeInfo");
  }
  CUptiResult EnableCallback(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain domain,
                             CUpti_CallbackId) override {
    domains.push_back(domain);
    return CUPTI_SUCCESS;
  }
  CUptiResult GetDeviceId(CUcontext, uint32_t* id) override {
    *id = 0;
    return CUPTI_SUCCESS;
  }
  CUcontext CurrentContext() override { return reinterpret_cast<CUcontext>(0x1); }
  std::string ResultString(CUptiResult r) override { return "CUPTI_ERROR_" + std::to_string(r); }

  size_t added = 0;
  CUpti_ProfilerRange range_mode = CUPTI_Range_INVALID;
  CUpti_ProfilerReplayMode replay_mode = CUPTI_Replay_INVALID;
  std::vector<std::string> pushed;
  std::vector<CUpti_CallbackDomain> domains;
  // Model CUPTI's user ranges (see PushRange); instances ended so far.
  bool model_ranges = false;
  uint64_t instances_done = 0;

 private:
  std::vector<std::string> model_names_;
  std::vector<double> model_sums_;
  size_t current_ = 0;
  int depth_ = 0;
};

struct Harness {
  FakeProfiler* fake = nullptr;
  StringInterner interner;
  std::vector<CounterBatchInfo> batches;
  std::vector<std::string> warnings;
  std::unique_ptr<RangeProfiler> profiler;
  int64_t clock = 0;  // the trace's clock: 10 ns a reading

  explicit Harness(std::map<std::string, std::string> env, FakeProfiler* f = nullptr) {
    auto owned = std::unique_ptr<FakeProfiler>(f ? f : new FakeProfiler);
    fake = owned.get();
    MetricsConfig config = ParseMetricsConfig([&](const char* name) -> std::optional<std::string> {
      auto it = env.find(name);
      return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
    });
    CounterSinks sinks;
    sinks.counters = [this](CounterBatchInfo b) { batches.push_back(std::move(b)); };
    sinks.warning = [this](std::string w) { warnings.push_back(std::move(w)); };
    sinks.now = [this] { return clock += 10; };
    profiler = std::make_unique<RangeProfiler>(config, std::move(owned), &interner, sinks);
  }

  void Launch(const char* symbol, uint64_t correlation) {
    CUpti_CallbackData cb{};
    cb.context = reinterpret_cast<CUcontext>(0x1);
    cb.symbolName = symbol;
    cb.correlationId = static_cast<uint32_t>(correlation);
    cb.callbackSite = CUPTI_API_ENTER;
    profiler->OnCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &cb);
    // The runtime calls the driver: the nested callback must not count twice.
    profiler->OnCallback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cb);
    cb.callbackSite = CUPTI_API_EXIT;
    profiler->OnCallback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cb);
    profiler->OnCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &cb);
  }

  void Push(const char* name) {
    nvtxRangePushA_params push{name};
    CUpti_NvtxData data{};
    data.functionParams = &push;
    profiler->OnCallback(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePushA, &data);
  }
  void Pop() {
    CUpti_NvtxData data{};
    profiler->OnCallback(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePop, &data);
  }
  std::vector<CounterSampleInfo> Samples() const {
    std::vector<CounterSampleInfo> all;
    for (const CounterBatchInfo& b : batches) all.insert(all.end(), b.samples.begin(), b.samples.end());
    return all;
  }

  size_t Count(const std::string& call) const {
    size_t n = 0;
    for (const std::string& c : fake->calls) n += c == call;
    return n;
  }
};


}  // namespace cutrace::injection::testing
