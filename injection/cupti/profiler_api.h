// ProfilerApi: the seam between cutrace's hardware-counter collection
// (injection/counters/range_profiler.h) and CUPTI's Range Profiler and Profiler Host
// APIs (cupti_range_profiler.h, cupti_profiler_host.h, cupti_profiler_target.h,
// cupti_target.h), plus the callback switches and the one driver call it
// needs. Unit tests drive the range profiler through a fake; production uses
// DlProfilerApi, resolved with dlsym from the libcupti the session already
// loaded (dlopen("libcupti.so.13", RTLD_NOLOAD)), so nothing links CUPTI.
//
// In CUDA 13 the range profiler lives in libcupti itself; libcupti loads
// NVIDIA's perfworks pieces (libnvperf_host/target, shipped beside it)
// itself when cuptiProfilerInitialize runs, so cutrace dlopens nothing more.
//
// Each method takes CUPTI's own parameter struct: the fake fills the [out]
// fields exactly as CUPTI does. Thread-safe as CUPTI is.
#pragma once

#include <cuda.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cstring>
#include <memory>
#include <string>

#include "collector/status.h"

namespace cutrace::injection {

// A CUPTI parameter struct, zeroed, with its size set (CUPTI checks it).
template <typename T>
T Params(size_t size) {
  T p;
  std::memset(&p, 0, sizeof(p));
  p.structSize = size;
  return p;
}

class ProfilerApi {
 public:
  virtual ~ProfilerApi() = default;

  virtual CUptiResult ProfilerInitialize(CUpti_Profiler_Initialize_Params* p) = 0;
  virtual CUptiResult DeviceGetChipName(CUpti_Device_GetChipName_Params* p) = 0;
  virtual CUptiResult GetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params* p) = 0;
  virtual CUptiResult DeviceSupported(CUpti_Profiler_DeviceSupported_Params* p) = 0;

  virtual CUptiResult HostInitialize(CUpti_Profiler_Host_Initialize_Params* p) = 0;
  virtual CUptiResult HostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params* p) = 0;
  virtual CUptiResult HostGetMetricProperties(CUpti_Profiler_Host_GetMetricProperties_Params* p) = 0;
  virtual CUptiResult HostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) = 0;
  virtual CUptiResult HostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) = 0;
  virtual CUptiResult HostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params* p) = 0;
  virtual CUptiResult HostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) = 0;
  virtual CUptiResult HostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) = 0;
  // The chips this libcupti's metric tables cover (only the metric check,
  // injection/counters/metric_check.h, asks); optional.
  virtual CUptiResult HostGetSupportedChips(CUpti_Profiler_Host_GetSupportedChips_Params* /*p*/) {
    return CUPTI_ERROR_NOT_SUPPORTED;
  }

  virtual CUptiResult Enable(CUpti_RangeProfiler_Enable_Params* p) = 0;
  virtual CUptiResult Disable(CUpti_RangeProfiler_Disable_Params* p) = 0;
  virtual CUptiResult GetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params* p) = 0;
  virtual CUptiResult CounterDataImageInitialize(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params* p) = 0;
  virtual CUptiResult SetConfig(CUpti_RangeProfiler_SetConfig_Params* p) = 0;
  virtual CUptiResult Start(CUpti_RangeProfiler_Start_Params* p) = 0;
  virtual CUptiResult Stop(CUpti_RangeProfiler_Stop_Params* p) = 0;
  virtual CUptiResult PushRange(CUpti_RangeProfiler_PushRange_Params* p) = 0;
  virtual CUptiResult PopRange(CUpti_RangeProfiler_PopRange_Params* p) = 0;
  virtual CUptiResult DecodeData(CUpti_RangeProfiler_DecodeData_Params* p) = 0;
  virtual CUptiResult GetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params* p) = 0;
  virtual CUptiResult GetRangeInfo(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params* p) = 0;

  virtual CUptiResult EnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                     CUpti_CallbackDomain domain, CUpti_CallbackId cbid) = 0;
  virtual CUptiResult GetDeviceId(CUcontext context, uint32_t* device_id) = 0;
  // cuCtxGetCurrent from the already loaded libcuda; nullptr when unknown.
  virtual CUcontext CurrentContext() = 0;
  virtual std::string ResultString(CUptiResult result) = 0;
};

// Resolves every entry point from the loaded libcupti ("libcupti at PATH
// lacks SYMBOL: cutrace needs CUDA 13's CUPTI for counters" otherwise).
StatusOr<std::unique_ptr<ProfilerApi>> LoadProfilerApi(const std::string& cupti_path);

}  // namespace cutrace::injection
