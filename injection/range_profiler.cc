// Hardware counters through the Range Profiler: see range_profiler.h.
#include "injection/range_profiler.h"

#include <cxxabi.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

#include <generated_nvtx_meta.h>

#include "injection/log.h"

namespace cutrace::injection {
namespace {

std::atomic<RangeProfiler*> g_profiler{nullptr};

// Launch nesting on this thread (a runtime launch calls the driver): only
// the outermost callback starts and stops a range.
thread_local int t_launch_depth = 0;
thread_local bool t_holding = false;
thread_local bool t_counting = false;
thread_local uint64_t t_correlation = 0;
thread_local uint32_t t_kernel_name = 0;
thread_local CUcontext t_context = nullptr;

bool IsLaunch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
        return true;
      default:
        return false;
    }
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    switch (cbid) {
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
        return true;
      default:
        return false;
    }
  }
  return false;
}

constexpr CUpti_CallbackId kRuntimeLaunches[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000};
constexpr CUpti_CallbackId kDriverLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,           CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,         CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz};
constexpr CUpti_CallbackId kNvtxCallbacks[] = {
    CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangePushW, CUPTI_CBID_NVTX_nvtxRangePushEx,
    CUPTI_CBID_NVTX_nvtxRangePop, CUPTI_CBID_NVTX_nvtxDomainRangePushEx,
    CUPTI_CBID_NVTX_nvtxDomainRangePop};

std::string Demangle(const char* mangled) {
  if (mangled == nullptr) return {};
  int status = 0;
  char* out = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return {};
  std::string s(out);
  std::free(out);
  return s;
}

std::string AttributeMessage(const nvtxEventAttributes_t* a) {
  if (a == nullptr) return {};
  if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii) return a->message.ascii;
  return "<unnamed>";
}

}  // namespace

RangeProfiler::RangeProfiler(MetricsConfig config, std::unique_ptr<ProfilerApi> api,
                             StringInterner* interner, CounterSinks sinks)
    : config_(std::move(config)),
      api_(std::move(api)),
      interner_(interner),
      sinks_(std::move(sinks)),
      selector_(config_),
      metrics_(config_.metrics) {
  pending_.scope = config_.scope == MetricsScope::kNvtx ? "nvtx" : "kernel";
}

bool RangeProfiler::Start(CUpti_SubscriberHandle subscriber) {
  if (!config_.enabled || metrics_.empty()) return false;
  if (!selector_.valid()) {
    FailWith("CUTRACE_KERNEL_FILTER is not a valid regex; hardware counters are not collected");
    return false;
  }
  auto enable = [&](CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
    return api_->EnableCallback(1, subscriber, domain, cbid) == CUPTI_SUCCESS;
  };
  bool any = false;
  if (config_.scope == MetricsScope::kKernel) {
    for (CUpti_CallbackId id : kRuntimeLaunches) any |= enable(CUPTI_CB_DOMAIN_RUNTIME_API, id);
    for (CUpti_CallbackId id : kDriverLaunches) any |= enable(CUPTI_CB_DOMAIN_DRIVER_API, id);
  } else {
    for (CUpti_CallbackId id : kNvtxCallbacks) any |= enable(CUPTI_CB_DOMAIN_NVTX, id);
  }
  if (!any) {
    FailWith("cannot enable CUPTI callbacks for counting; hardware counters are not collected");
    return false;
  }
  return true;
}

void RangeProfiler::OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                               const void* data) {
  if (data == nullptr || finished_.load(std::memory_order_acquire)) return;
  if (config_.scope == MetricsScope::kKernel && IsLaunch(domain, cbid)) {
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    OnLaunch(cb->callbackSite == CUPTI_API_ENTER, cb);
  } else if (config_.scope == MetricsScope::kNvtx && domain == CUPTI_CB_DOMAIN_NVTX) {
    OnNvtx(cbid, data);
  }
}

void RangeProfiler::OnLaunch(bool enter, const CUpti_CallbackData* cb) {
  if (enter) {
    if (t_launch_depth++ > 0) return;
    // Hold the lock over the whole launch (released at its exit) so no other
    // thread's kernel lands in a counted range.
    mu_.lock();
    t_holding = true;
    t_counting = false;
    if (failed()) return;
    // A program's first runtime launch may create its context: without one
    // yet, this launch is not counted (never a reason to give up counting).
    CUcontext ctx = cb->context ? cb->context : api_->CurrentContext();
    if (ctx == nullptr) return;
    const char* symbol = cb->symbolName;
    std::string mangled = symbol ? symbol : "";
    if (!selector_.Select(mangled, Demangle(symbol))) return;
    Context* c = Ensure(ctx);
    if (c == nullptr || !StartRange(*c)) return;
    t_counting = true;
    t_context = ctx;
    t_correlation = cb->correlationId;
    t_kernel_name = mangled.empty() ? 0 : interner_->Intern(mangled);
    return;
  }
  if (t_launch_depth == 0 || --t_launch_depth > 0) return;
  if (t_counting && !failed()) {
    auto it = contexts_.find(t_context);
    if (it != contexts_.end()) Collect(it->second, t_correlation, t_kernel_name);
  }
  t_counting = false;
  if (t_holding) {
    t_holding = false;
    mu_.unlock();
  }
}

void RangeProfiler::OnNvtx(CUpti_CallbackId cbid, const void* data) {
  const auto* nvtx = static_cast<const CUpti_NvtxData*>(data);
  bool push = cbid != CUPTI_CBID_NVTX_nvtxRangePop && cbid != CUPTI_CBID_NVTX_nvtxDomainRangePop;
  std::string name;
  if (push && nvtx->functionParams != nullptr) {
    switch (cbid) {
      case CUPTI_CBID_NVTX_nvtxRangePushA:
        if (auto* p = static_cast<const nvtxRangePushA_params*>(nvtx->functionParams); p->message)
          name = p->message;
        break;
      case CUPTI_CBID_NVTX_nvtxRangePushEx:
        name = AttributeMessage(
            static_cast<const nvtxRangePushEx_params*>(nvtx->functionParams)->eventAttrib);
        break;
      case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
        name = AttributeMessage(
            static_cast<const nvtxDomainRangePushEx_params*>(nvtx->functionParams)->core.eventAttrib);
        break;
      default:
        name = "<wide>";
        break;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (failed()) return;
  CUcontext ctx = api_->CurrentContext();
  if (ctx == nullptr) return;  // no context yet: nothing to count on
  Context* c = Ensure(ctx);
  if (c == nullptr) return;
  if (push) {
    if (!c->started && !StartRange(*c)) return;
    auto p = Params<CUpti_RangeProfiler_PushRange_Params>(CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = c->object;
    p.pRangeName = name.c_str();
    if (CUptiResult r = api_->PushRange(&p); r != CUPTI_SUCCESS) return Fail("cuptiRangeProfilerPushRange", r);
    ++c->depth;
    return;
  }
  if (c->depth == 0) return;  // a pop of a range pushed before counting began
  auto p = Params<CUpti_RangeProfiler_PopRange_Params>(CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
  p.pRangeProfilerObject = c->object;
  if (CUptiResult r = api_->PopRange(&p); r != CUPTI_SUCCESS) return Fail("cuptiRangeProfilerPopRange", r);
  if (--c->depth == 0 && ++c->closed >= kNvtxRanges) Collect(*c, 0, 0);
}

RangeProfiler::Context* RangeProfiler::Ensure(CUcontext ctx) {
  auto [it, fresh] = contexts_.try_emplace(ctx);
  if (fresh) it->second.ok = SetUp(ctx, it->second);
  return it->second.ok && !failed() ? &it->second : nullptr;
}

bool RangeProfiler::SetUp(CUcontext ctx, Context& c) {
  if (!initialized_) {
    auto p = Params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    if (CUptiResult r = api_->ProfilerInitialize(&p); r != CUPTI_SUCCESS) {
      Fail("cuptiProfilerInitialize", r);
      return false;
    }
    initialized_ = true;
  }
  if (CUptiResult r = api_->GetDeviceId(ctx, &c.device); r != CUPTI_SUCCESS) {
    Fail("cuptiGetDeviceId", r);
    return false;
  }
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
  if (CUptiResult r = api_->GetCounterAvailability(&avail); r != CUPTI_SUCCESS) {
    Fail("cuptiProfilerGetCounterAvailability", r);
    return false;
  }
  availability.resize(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  if (CUptiResult r = api_->GetCounterAvailability(&avail); r != CUPTI_SUCCESS) {
    Fail("cuptiProfilerGetCounterAvailability", r);
    return false;
  }
  auto host = Params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host.pChipName = chip_name.c_str();
  host.pCounterAvailabilityImage = availability.data();
  if (CUptiResult r = api_->HostInitialize(&host); r != CUPTI_SUCCESS) {
    Fail("cuptiProfilerHostInitialize", r);
    return false;
  }
  c.host = host.pHostObject;
  if (!ValidateMetrics(c, chip_name)) return false;
  if (!Configure(c)) return false;
  auto en = Params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  en.ctx = ctx;
  if (CUptiResult r = api_->Enable(&en); r != CUPTI_SUCCESS) {
    Fail("cuptiRangeProfilerEnable", r);
    return false;
  }
  c.object = en.pRangeProfilerObject;
  const size_t ranges = config_.scope == MetricsScope::kNvtx ? kNvtxRanges : kKernelRanges;
  auto size = Params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = c.object;
  size.pMetricNames = metric_ptrs_.data();
  size.numMetrics = metric_ptrs_.size();
  size.maxNumOfRanges = ranges;
  size.maxNumRangeTreeNodes = static_cast<uint32_t>(ranges);
  if (CUptiResult r = api_->GetCounterDataSize(&size); r != CUPTI_SUCCESS) {
    Fail("cuptiRangeProfilerGetCounterDataSize", r);
    return false;
  }
  c.counter_data.assign(size.counterDataSize, 0);
  auto init = Params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = c.object;
  init.counterDataSize = c.counter_data.size();
  init.pCounterData = c.counter_data.data();
  if (CUptiResult r = api_->CounterDataImageInitialize(&init); r != CUPTI_SUCCESS) {
    Fail("cuptiRangeProfilerCounterDataImageInitialize", r);
    return false;
  }
  auto set = Params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  set.pRangeProfilerObject = c.object;
  set.configSize = c.config.size();
  set.pConfig = c.config.data();
  set.counterDataImageSize = c.counter_data.size();
  set.pCounterDataImage = c.counter_data.data();
  set.range = config_.scope == MetricsScope::kNvtx ? CUPTI_UserRange : CUPTI_AutoRange;
  set.replayMode = config_.scope == MetricsScope::kNvtx ? CUPTI_UserReplay : CUPTI_KernelReplay;
  set.maxRangesPerPass = ranges;
  set.numNestingLevels = 1;
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  if (CUptiResult r = api_->SetConfig(&set); r != CUPTI_SUCCESS) {
    Fail("cuptiRangeProfilerSetConfig", r);
    return false;
  }
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

bool RangeProfiler::Configure(Context& c) {
  auto add = Params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = c.host;
  add.ppMetricNames = metric_ptrs_.data();
  add.numMetrics = metric_ptrs_.size();
  if (CUptiResult r = api_->HostConfigAddMetrics(&add); r != CUPTI_SUCCESS) {
    Fail("cuptiProfilerHostConfigAddMetrics", r);
    return false;
  }
  auto size = Params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = c.host;
  if (CUptiResult r = api_->HostGetConfigImageSize(&size); r != CUPTI_SUCCESS) {
    Fail("cuptiProfilerHostGetConfigImageSize", r);
    return false;
  }
  c.config.assign(size.configImageSize, 0);
  auto image = Params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  image.pHostObject = c.host;
  image.configImageSize = c.config.size();
  image.pConfigImage = c.config.data();
  if (CUptiResult r = api_->HostGetConfigImage(&image); r != CUPTI_SUCCESS) {
    Fail("cuptiProfilerHostGetConfigImage", r);
    return false;
  }
  auto passes = Params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  passes.configImageSize = c.config.size();
  passes.pConfigImage = c.config.data();
  if (CUptiResult r = api_->HostGetNumOfPasses(&passes); r != CUPTI_SUCCESS) {
    Fail("cuptiProfilerHostGetNumOfPasses", r);
    return false;
  }
  c.passes = passes.numOfPasses ? passes.numOfPasses : 1;
  if (config_.scope == MetricsScope::kNvtx && c.passes > 1) {
    FailWith("the metrics need " + std::to_string(c.passes) +
             " passes, and NVTX scope can only collect what fits one pass (the program cannot be "
             "replayed): ask for fewer metrics, or use --metrics-scope kernel");
    return false;
  }
  return true;
}

bool RangeProfiler::StartRange(Context& c) {
  auto p = Params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  p.pRangeProfilerObject = c.object;
  CUptiResult r = api_->Start(&p);
  if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_INSUFFICIENT_PRIVILEGES && r != CUPTI_ERROR_HARDWARE_BUSY) {
    // After a reset some versions want the configuration again.
    auto set = Params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    set.pRangeProfilerObject = c.object;
    set.configSize = c.config.size();
    set.pConfig = c.config.data();
    set.counterDataImageSize = c.counter_data.size();
    set.pCounterDataImage = c.counter_data.data();
    set.range = config_.scope == MetricsScope::kNvtx ? CUPTI_UserRange : CUPTI_AutoRange;
    set.replayMode = config_.scope == MetricsScope::kNvtx ? CUPTI_UserReplay : CUPTI_KernelReplay;
    set.maxRangesPerPass = config_.scope == MetricsScope::kNvtx ? kNvtxRanges : kKernelRanges;
    set.numNestingLevels = 1;
    set.minNestingLevel = 1;
    set.targetNestingLevel = 1;
    if (api_->SetConfig(&set) == CUPTI_SUCCESS) r = api_->Start(&p);
  }
  if (r != CUPTI_SUCCESS) {
    Fail("cuptiRangeProfilerStart", r);
    return false;
  }
  c.started = true;
  return true;
}

void RangeProfiler::Collect(Context& c, uint64_t correlation_id, uint32_t kernel_name_id) {
  if (!c.started) return;
  c.started = false;
  c.closed = 0;
  auto stop = Params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  stop.pRangeProfilerObject = c.object;
  if (CUptiResult r = api_->Stop(&stop); r != CUPTI_SUCCESS) return Fail("cuptiRangeProfilerStop", r);
  if (!stop.isAllPassSubmitted)
    Log(LogLevel::kDebug, "range profiler: not every pass was submitted (pass %zu)", stop.passIndex);
  auto decode = Params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = c.object;
  if (CUptiResult r = api_->DecodeData(&decode); r != CUPTI_SUCCESS)
    return Fail("cuptiRangeProfilerDecodeData", r);
  if (decode.numOfRangeDropped > 0)
    Log(LogLevel::kWarn, "range profiler dropped %zu ranges", decode.numOfRangeDropped);
  auto info = Params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = c.counter_data.data();
  info.counterDataImageSize = c.counter_data.size();
  if (CUptiResult r = api_->GetCounterDataInfo(&info); r != CUPTI_SUCCESS)
    return Fail("cuptiRangeProfilerGetCounterDataInfo", r);
  const bool nvtx = config_.scope == MetricsScope::kNvtx;
  // Kernel scope: the launch's own range is the first (a kernel of another
  // stream cannot slip in while the launch lock is held).
  size_t n = nvtx ? info.numTotalRanges : std::min<size_t>(info.numTotalRanges, 1);
  for (size_t i = 0; i < n; ++i) {
    CounterSampleInfo s;
    s.values.assign(metrics_.size(), 0.0);
    auto eval = Params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    eval.pHostObject = c.host;
    eval.pCounterDataImage = c.counter_data.data();
    eval.counterDataImageSize = c.counter_data.size();
    eval.rangeIndex = i;
    eval.ppMetricNames = metric_ptrs_.data();
    eval.numMetrics = metric_ptrs_.size();
    eval.pMetricValues = s.values.data();
    if (CUptiResult r = api_->HostEvaluateToGpuValues(&eval); r != CUPTI_SUCCESS)
      return Fail("cuptiProfilerHostEvaluateToGpuValues", r);
    s.device_id = c.device;
    s.passes = static_cast<uint32_t>(c.passes);
    s.thread_id = static_cast<uint64_t>(::syscall(SYS_gettid));
    if (nvtx) {
      auto range = Params<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
      range.pCounterDataImage = c.counter_data.data();
      range.counterDataImageSize = c.counter_data.size();
      range.rangeIndex = i;
      range.rangeDelimiter = "/";
      std::string name = "<range>";
      if (api_->GetRangeInfo(&range) == CUPTI_SUCCESS && range.rangeName != nullptr)
        name = range.rangeName;
      s.range_name_id = interner_->Intern(name);
    } else {
      s.correlation_id = correlation_id;
      s.kernel_name_id = kernel_name_id;
    }
    pending_.samples.push_back(std::move(s));
    counted_.fetch_add(1, std::memory_order_relaxed);
  }
  // Reset the image for the next ranges.
  auto init = Params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = c.object;
  init.counterDataSize = c.counter_data.size();
  init.pCounterData = c.counter_data.data();
  if (CUptiResult r = api_->CounterDataImageInitialize(&init); r != CUPTI_SUCCESS)
    return Fail("cuptiRangeProfilerCounterDataImageInitialize", r);
  if (pending_.samples.size() >= kSamplesPerBatch) Flush();
  // NVTX scope keeps counting: start again for the next ranges.
  if (nvtx && !finished_.load(std::memory_order_acquire)) StartRange(c);
}

void RangeProfiler::Flush() {
  if (pending_.samples.empty()) return;
  CounterBatchInfo batch;
  batch.metric_name_ids = pending_.metric_name_ids;
  batch.scope = pending_.scope;
  batch.samples.swap(pending_.samples);
  if (sinks_.counters) sinks_.counters(std::move(batch));
}

void RangeProfiler::Finish() {
  if (finished_.exchange(true, std::memory_order_acq_rel)) return;
  // A thread stuck in a counted launch must not hang the program's exit.
  std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
  for (int i = 0; i < 200 && !lock.try_lock(); ++i) ::usleep(5000);
  if (!lock.owns_lock()) {
    Log(LogLevel::kWarn, "counters: a counted launch was still running at exit; its values are lost");
    return;
  }
  if (!failed())
    for (auto& [ctx, c] : contexts_)
      if (c.ok && c.started && c.depth == 0) Collect(c, 0, 0);
  Flush();
  if (!failed() && counted_.load() == 0 && !contexts_.empty())
    Log(LogLevel::kWarn, "counters: no launch or range was counted (check --kernel-filter / the NVTX ranges)");
}

void RangeProfiler::Fail(const char* what, CUptiResult r) {
  std::string line;
  switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      line = "hardware counters not collected: the driver allows GPU performance counters to "
             "admin users only (ERR_NVGPUCTRPERM). Run as root (or with CAP_SYS_ADMIN), or set "
             "the nvidia module option NVreg_RestrictProfilingToAdminUsers=0";
      break;
    case CUPTI_ERROR_HARDWARE_BUSY:
      line = "hardware counters not collected: the counters are in use by another profiler "
             "(ncu, nsys, DCGM profiling). Stop it or pause DCGM (dcgmi profile --pause)";
      break;
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
      line = "hardware counters not collected: counters are not available on a MIG instance; "
             "run on a GPU without MIG";
      break;
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
      line = std::string("hardware counters not collected: this device does not support the "
                         "range profiler (") + what + ": " + api_->ResultString(r) + ")";
      break;
    default:
      line = std::string("hardware counters not collected: ") + what + " failed (" +
             api_->ResultString(r) + ")";
      break;
  }
  FailWith(line + "; the activity trace is still written");
}

void RangeProfiler::FailWith(const std::string& line) {
  if (failed_.exchange(true, std::memory_order_acq_rel)) return;
  Log(LogLevel::kWarn, "%s", line.c_str());
  if (sinks_.warning) sinks_.warning(line);
}

void CUPTIAPI CounterCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                              const void* data) {
  if (RangeProfiler* p = g_profiler.load(std::memory_order_acquire)) p->OnCallback(domain, cbid, data);
}

bool StartCounters(const EnvGetter& env, const std::string& cupti_path,
                   CUpti_SubscriberHandle subscriber, StringInterner* interner, CounterSinks sinks) {
  MetricsConfig config = ParseMetricsConfig(env);
  for (const std::string& p : config.problems) Log(LogLevel::kWarn, "%s", p.c_str());
  if (!config.enabled) return false;
  auto api = LoadProfilerApi(cupti_path);
  if (!api.ok()) {
    Log(LogLevel::kWarn, "hardware counters not collected: %s", api.status().message().c_str());
    return false;
  }
  // Never destroyed: CUPTI may call back after Finalize.
  auto* profiler = new RangeProfiler(std::move(config), std::move(api).value(), interner, std::move(sinks));
  if (!profiler->Start(subscriber)) return false;
  g_profiler.store(profiler, std::memory_order_release);
  return true;
}

void FinishCounters() {
  if (RangeProfiler* p = g_profiler.load(std::memory_order_acquire)) p->Finish();
}

}  // namespace cutrace::injection
