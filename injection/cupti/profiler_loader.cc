// DlProfilerApi: ProfilerApi over dlsym'ed libcupti entry points. See
// profiler_api.h.
#include <dlfcn.h>

#include "injection/cupti/cupti_loader.h"
#include "injection/cupti/profiler_api.h"

namespace cutrace::injection {
namespace {

template <typename Params>
using Fn = CUptiResult (*)(Params*);

class DlProfilerApi final : public ProfilerApi {
 public:
  Status Load(const std::string& path) {
    // The session loaded libcupti already: take that copy (same handle).
    handle_ = ::dlopen(kCuptiSoname, RTLD_NOW | RTLD_NOLOAD);
    ::dlerror();
    if (handle_ == nullptr && !path.empty()) handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* err = path.empty() ? nullptr : ::dlerror();
      return Status::Error(std::string("cannot find the loaded libcupti for counters") +
                           (err ? std::string(" (") + err + ")" : std::string()));
    }
    std::string missing;
    auto need = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(handle_, name));
      if (fn == nullptr && missing.empty()) missing = name;
    };
    need(init_, "cuptiProfilerInitialize");
    need(chip_, "cuptiDeviceGetChipName");
    need(avail_, "cuptiProfilerGetCounterAvailability");
    need(supported_, "cuptiProfilerDeviceSupported");
    need(host_init_, "cuptiProfilerHostInitialize");
    need(host_deinit_, "cuptiProfilerHostDeinitialize");
    need(host_props_, "cuptiProfilerHostGetMetricProperties");
    need(host_add_, "cuptiProfilerHostConfigAddMetrics");
    need(host_image_size_, "cuptiProfilerHostGetConfigImageSize");
    need(host_image_, "cuptiProfilerHostGetConfigImage");
    need(host_passes_, "cuptiProfilerHostGetNumOfPasses");
    need(host_eval_, "cuptiProfilerHostEvaluateToGpuValues");
    need(enable_, "cuptiRangeProfilerEnable");
    need(disable_, "cuptiRangeProfilerDisable");
    need(data_size_, "cuptiRangeProfilerGetCounterDataSize");
    need(data_init_, "cuptiRangeProfilerCounterDataImageInitialize");
    need(set_config_, "cuptiRangeProfilerSetConfig");
    need(start_, "cuptiRangeProfilerStart");
    need(stop_, "cuptiRangeProfilerStop");
    need(push_, "cuptiRangeProfilerPushRange");
    need(pop_, "cuptiRangeProfilerPopRange");
    need(decode_, "cuptiRangeProfilerDecodeData");
    need(data_info_, "cuptiRangeProfilerGetCounterDataInfo");
    need(range_info_, "cuptiRangeProfilerCounterDataGetRangeInfo");
    need(enable_callback_, "cuptiEnableCallback");
    need(device_id_, "cuptiGetDeviceId");
    need(result_string_, "cuptiGetResultString");
    host_chips_ = reinterpret_cast<Fn<CUpti_Profiler_Host_GetSupportedChips_Params>>(
        ::dlsym(handle_, "cuptiProfilerHostGetSupportedChips"));
    if (!missing.empty())
      return Status::Error("libcupti lacks " + missing +
                           ": hardware counters need CUDA 13's CUPTI (set CUTRACE_CUPTI_PATH)");
    if (void* cuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD))
      ctx_current_ = reinterpret_cast<CUresult (*)(CUcontext*)>(::dlsym(cuda, "cuCtxGetCurrent"));
    return Status::Ok();
  }

  CUptiResult ProfilerInitialize(CUpti_Profiler_Initialize_Params* p) override { return init_(p); }
  CUptiResult DeviceGetChipName(CUpti_Device_GetChipName_Params* p) override { return chip_(p); }
  CUptiResult GetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params* p) override {
    return avail_(p);
  }
  CUptiResult DeviceSupported(CUpti_Profiler_DeviceSupported_Params* p) override {
    return supported_(p);
  }
  CUptiResult HostInitialize(CUpti_Profiler_Host_Initialize_Params* p) override { return host_init_(p); }
  CUptiResult HostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params* p) override {
    return host_deinit_(p);
  }
  CUptiResult HostGetMetricProperties(CUpti_Profiler_Host_GetMetricProperties_Params* p) override {
    return host_props_(p);
  }
  CUptiResult HostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) override {
    return host_add_(p);
  }
  CUptiResult HostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) override {
    return host_image_size_(p);
  }
  CUptiResult HostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params* p) override {
    return host_image_(p);
  }
  CUptiResult HostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) override {
    return host_passes_(p);
  }
  CUptiResult HostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) override {
    return host_eval_(p);
  }
  CUptiResult HostGetSupportedChips(CUpti_Profiler_Host_GetSupportedChips_Params* p) override {
    return host_chips_ ? host_chips_(p) : CUPTI_ERROR_NOT_SUPPORTED;
  }
  CUptiResult Enable(CUpti_RangeProfiler_Enable_Params* p) override { return enable_(p); }
  CUptiResult Disable(CUpti_RangeProfiler_Disable_Params* p) override { return disable_(p); }
  CUptiResult GetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params* p) override {
    return data_size_(p);
  }
  CUptiResult CounterDataImageInitialize(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params* p) override {
    return data_init_(p);
  }
  CUptiResult SetConfig(CUpti_RangeProfiler_SetConfig_Params* p) override { return set_config_(p); }
  CUptiResult Start(CUpti_RangeProfiler_Start_Params* p) override { return start_(p); }
  CUptiResult Stop(CUpti_RangeProfiler_Stop_Params* p) override { return stop_(p); }
  CUptiResult PushRange(CUpti_RangeProfiler_PushRange_Params* p) override { return push_(p); }
  CUptiResult PopRange(CUpti_RangeProfiler_PopRange_Params* p) override { return pop_(p); }
  CUptiResult DecodeData(CUpti_RangeProfiler_DecodeData_Params* p) override { return decode_(p); }
  CUptiResult GetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params* p) override {
    return data_info_(p);
  }
  CUptiResult GetRangeInfo(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params* p) override {
    return range_info_(p);
  }
  CUptiResult EnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                             CUpti_CallbackDomain domain, CUpti_CallbackId cbid) override {
    return enable_callback_(enable, subscriber, domain, cbid);
  }
  CUptiResult GetDeviceId(CUcontext context, uint32_t* device_id) override {
    return device_id_(context, device_id);
  }
  CUcontext CurrentContext() override {
    CUcontext ctx = nullptr;
    if (ctx_current_ == nullptr || ctx_current_(&ctx) != CUDA_SUCCESS) return nullptr;
    return ctx;
  }
  std::string ResultString(CUptiResult result) override {
    const char* s = nullptr;
    if (result_string_ != nullptr && result_string_(result, &s) == CUPTI_SUCCESS && s != nullptr)
      return s;
    return "CUPTI error " + std::to_string(static_cast<int>(result));
  }

 private:
  void* handle_ = nullptr;
  Fn<CUpti_Profiler_Initialize_Params> init_ = nullptr;
  Fn<CUpti_Device_GetChipName_Params> chip_ = nullptr;
  Fn<CUpti_Profiler_GetCounterAvailability_Params> avail_ = nullptr;
  Fn<CUpti_Profiler_DeviceSupported_Params> supported_ = nullptr;
  Fn<CUpti_Profiler_Host_Initialize_Params> host_init_ = nullptr;
  Fn<CUpti_Profiler_Host_Deinitialize_Params> host_deinit_ = nullptr;
  Fn<CUpti_Profiler_Host_GetMetricProperties_Params> host_props_ = nullptr;
  Fn<CUpti_Profiler_Host_ConfigAddMetrics_Params> host_add_ = nullptr;
  Fn<CUpti_Profiler_Host_GetConfigImageSize_Params> host_image_size_ = nullptr;
  Fn<CUpti_Profiler_Host_GetConfigImage_Params> host_image_ = nullptr;
  Fn<CUpti_Profiler_Host_GetNumOfPasses_Params> host_passes_ = nullptr;
  Fn<CUpti_Profiler_Host_EvaluateToGpuValues_Params> host_eval_ = nullptr;
  Fn<CUpti_Profiler_Host_GetSupportedChips_Params> host_chips_ = nullptr;  // optional
  Fn<CUpti_RangeProfiler_Enable_Params> enable_ = nullptr;
  Fn<CUpti_RangeProfiler_Disable_Params> disable_ = nullptr;
  Fn<CUpti_RangeProfiler_GetCounterDataSize_Params> data_size_ = nullptr;
  Fn<CUpti_RangeProfiler_CounterDataImage_Initialize_Params> data_init_ = nullptr;
  Fn<CUpti_RangeProfiler_SetConfig_Params> set_config_ = nullptr;
  Fn<CUpti_RangeProfiler_Start_Params> start_ = nullptr;
  Fn<CUpti_RangeProfiler_Stop_Params> stop_ = nullptr;
  Fn<CUpti_RangeProfiler_PushRange_Params> push_ = nullptr;
  Fn<CUpti_RangeProfiler_PopRange_Params> pop_ = nullptr;
  Fn<CUpti_RangeProfiler_DecodeData_Params> decode_ = nullptr;
  Fn<CUpti_RangeProfiler_GetCounterDataInfo_Params> data_info_ = nullptr;
  Fn<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params> range_info_ = nullptr;
  CUptiResult (*enable_callback_)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                  CUpti_CallbackId) = nullptr;
  CUptiResult (*device_id_)(CUcontext, uint32_t*) = nullptr;
  CUptiResult (*result_string_)(CUptiResult, const char**) = nullptr;
  CUresult (*ctx_current_)(CUcontext*) = nullptr;
};

}  // namespace

StatusOr<std::unique_ptr<ProfilerApi>> LoadProfilerApi(const std::string& cupti_path) {
  auto api = std::make_unique<DlProfilerApi>();
  if (Status s = api->Load(cupti_path); !s.ok()) return s;
  return std::unique_ptr<ProfilerApi>(std::move(api));
}

}  // namespace cutrace::injection
