// RangeProfiler (range_profiler.h): the per-context set-up — the Profiler
// Host object for the chip, the metric names checked against it, the
// counter configuration image and the Range Profiler session (range_profiler.h
// lists the exact CUPTI call order). The launch and NVTX callbacks that
// use it, and the collection, are in range_profiler.cc.
//
// Threads: called from inside a launch or NVTX callback with the
// profiler's lock held (OnLaunch / OnNvtx), once per context.
#include "injection/counters/range_profiler.h"

#include <cstring>

#include "injection/log.h"

namespace cutrace::injection {

RangeProfiler::Context* RangeProfiler::Ensure(CUcontext ctx) {
  auto [it, fresh] = contexts_.try_emplace(ctx);
  if (fresh) it->second.ok = SetUp(ctx, it->second);
  return it->second.ok && !failed() ? &it->second : nullptr;
}

bool RangeProfiler::SetUp(CUcontext ctx, Context& c) {
  if (!initialized_) {
    auto p = Params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    if (!Succeeded("cuptiProfilerInitialize", api_->ProfilerInitialize(&p))) return false;
    initialized_ = true;
  }
  if (!Succeeded("cuptiGetDeviceId", api_->GetDeviceId(ctx, &c.device))) return false;
  auto sup = Params<CUpti_Profiler_DeviceSupported_Params>(CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
  sup.cuDevice = static_cast<CUdevice>(c.device);
  sup.api = CUPTI_PROFILER_RANGE_PROFILING;
  if (api_->DeviceSupported(&sup) == CUPTI_SUCCESS &&
      sup.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
    std::string why = "this GPU";
    if (sup.architecture != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why = "this GPU architecture (needs CC 7.5 or newer)";
    else if (sup.vGpu != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why = "this vGPU (profiling not enabled for it)";
    else if (sup.confidentialCompute != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why = "a GPU in confidential-compute mode";
    else if (sup.cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why = "a CMP device";
    else if (sup.wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why = "WSL";
    else if (sup.sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) why = "SLI";
    FailWith("hardware counters are not supported on " + why + " (device " + std::to_string(c.device) +
             "); the activity trace is still written");
    return false;
  }
  auto chip = Params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = c.device;
  if (CUptiResult r = api_->DeviceGetChipName(&chip); r != CUPTI_SUCCESS || chip.pChipName == nullptr) {
    Fail("cuptiDeviceGetChipName", r);
    return false;
  }
  std::string chip_name = chip.pChipName;
  auto avail = Params<CUpti_Profiler_GetCounterAvailability_Params>(CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  avail.ctx = ctx;
  std::vector<uint8_t> availability;
  if (!Succeeded("cuptiProfilerGetCounterAvailability", api_->GetCounterAvailability(&avail))) return false;
  availability.resize(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  if (!Succeeded("cuptiProfilerGetCounterAvailability", api_->GetCounterAvailability(&avail))) return false;
  auto host = Params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host.pChipName = chip_name.c_str();
  host.pCounterAvailabilityImage = availability.data();
  if (!Succeeded("cuptiProfilerHostInitialize", api_->HostInitialize(&host))) return false;
  c.host = host.pHostObject;
  if (!ValidateMetrics(c, chip_name)) return false;
  if (!Configure(c)) return false;
  auto en = Params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  en.ctx = ctx;
  if (!Succeeded("cuptiRangeProfilerEnable", api_->Enable(&en))) return false;
  c.object = en.pRangeProfilerObject;
  const size_t ranges = config_.scope == MetricsScope::kNvtx ? kNvtxRanges : kKernelRanges;
  auto size = Params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = c.object;
  size.pMetricNames = metric_ptrs_.data();
  size.numMetrics = metric_ptrs_.size();
  size.maxNumOfRanges = ranges;
  size.maxNumRangeTreeNodes = static_cast<uint32_t>(ranges);
  if (!Succeeded("cuptiRangeProfilerGetCounterDataSize", api_->GetCounterDataSize(&size))) return false;
  c.counter_data.assign(size.counterDataSize, 0);
  auto init = Params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = c.object;
  init.counterDataSize = c.counter_data.size();
  init.pCounterData = c.counter_data.data();
  if (!Succeeded("cuptiRangeProfilerCounterDataImageInitialize", api_->CounterDataImageInitialize(&init))) return false;
  if (!Succeeded("cuptiRangeProfilerSetConfig", ApplyConfig(c))) return false;
  Log(LogLevel::kInfo, "counting %zu metrics on device %u (%s), %zu pass(es) per %s",
      metrics_.size(), c.device, chip_name.c_str(), c.passes,
      config_.scope == MetricsScope::kNvtx ? "range" : "kernel");
  return true;
}

bool RangeProfiler::ValidateMetrics(Context& c, const std::string& chip) {
  if (validated_) return true;
  std::vector<std::string> kept;
  std::string dropped;
  for (size_t i = 0; i < metrics_.size(); ++i) {
    auto p = Params<CUpti_Profiler_Host_GetMetricProperties_Params>(CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
    p.pHostObject = c.host;
    p.pMetricName = metrics_[i].c_str();
    CUptiResult r = api_->HostGetMetricProperties(&p);
    if (r == CUPTI_SUCCESS) {
      kept.push_back(metrics_[i]);
      continue;
    }
    bool preset = i < config_.from_preset.size() && config_.from_preset[i];
    if (!preset) {
      FailWith("metric " + metrics_[i] + " is not available on this GPU (" + chip + ": " +
               api_->ResultString(r) +
               "); no hardware counters are collected (presets: cutrace metrics --list)");
      return false;
    }
    dropped += (dropped.empty() ? "" : ", ") + metrics_[i];
  }
  if (!dropped.empty())
    Log(LogLevel::kWarn, "counters: %s not available on %s, left out of the preset",
        dropped.c_str(), chip.c_str());
  if (kept.empty()) {
    FailWith("none of the requested metrics exists on " + chip + "; no hardware counters are collected");
    return false;
  }
  metrics_ = std::move(kept);
  metric_ptrs_.clear();
  for (const std::string& m : metrics_) metric_ptrs_.push_back(m.c_str());
  pending_.metric_name_ids.clear();
  for (const std::string& m : metrics_) pending_.metric_name_ids.push_back(interner_->Intern(m));
  validated_ = true;
  return true;
}

CUptiResult RangeProfiler::ApplyConfig(Context& c) {
  const bool nvtx = config_.scope == MetricsScope::kNvtx;
  auto set = Params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  set.pRangeProfilerObject = c.object;
  set.configSize = c.config.size();
  set.pConfig = c.config.data();
  set.counterDataImageSize = c.counter_data.size();
  set.pCounterDataImage = c.counter_data.data();
  set.range = nvtx ? CUPTI_UserRange : CUPTI_AutoRange;
  set.replayMode = nvtx ? CUPTI_UserReplay : CUPTI_KernelReplay;
  set.maxRangesPerPass = nvtx ? kNvtxRanges : kKernelRanges;
  set.numNestingLevels = 1;
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  return api_->SetConfig(&set);
}

bool RangeProfiler::Configure(Context& c) {
  auto add = Params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = c.host;
  add.ppMetricNames = metric_ptrs_.data();
  add.numMetrics = metric_ptrs_.size();
  if (!Succeeded("cuptiProfilerHostConfigAddMetrics", api_->HostConfigAddMetrics(&add))) return false;
  auto size = Params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = c.host;
  if (!Succeeded("cuptiProfilerHostGetConfigImageSize", api_->HostGetConfigImageSize(&size))) return false;
  c.config.assign(size.configImageSize, 0);
  auto image = Params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  image.pHostObject = c.host;
  image.configImageSize = c.config.size();
  image.pConfigImage = c.config.data();
  if (!Succeeded("cuptiProfilerHostGetConfigImage", api_->HostGetConfigImage(&image))) return false;
  auto passes = Params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  passes.configImageSize = c.config.size();
  passes.pConfigImage = c.config.data();
  if (!Succeeded("cuptiProfilerHostGetNumOfPasses", api_->HostGetNumOfPasses(&passes))) return false;
  c.passes = passes.numOfPasses ? passes.numOfPasses : 1;
  if (config_.scope == MetricsScope::kNvtx && c.passes > 1) {
    FailWith("the metrics need " + std::to_string(c.passes) +
             " passes, and NVTX scope can only collect what fits one pass (the program cannot be "
             "replayed): ask for fewer metrics, or use --metrics-scope kernel");
    return false;
  }
  return true;
}

}  // namespace cutrace::injection
