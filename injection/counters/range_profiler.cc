// Hardware counters through the Range Profiler: see range_profiler.h.
#include "injection/counters/range_profiler.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

#include <generated_nvtx_meta.h>

#include "collector/string_interner.h"
#include "injection/cupti/launch_callbacks.h"
#include "injection/log.h"
#include "injection/process_state.h"

namespace cutrace::injection {
namespace {

// Launch nesting on this thread (a runtime launch calls the driver): only
// the outermost callback starts and stops a range.
thread_local int t_launch_depth = 0;
thread_local bool t_holding = false;
thread_local bool t_counting = false;
thread_local uint64_t t_correlation = 0;
thread_local uint32_t t_kernel_name = 0;
thread_local uint64_t t_launch_index = 0;
thread_local CUcontext t_context = nullptr;

constexpr CUpti_CallbackId kNvtxCallbacks[] = {
    CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangePushW, CUPTI_CBID_NVTX_nvtxRangePushEx,
    CUPTI_CBID_NVTX_nvtxRangePop, CUPTI_CBID_NVTX_nvtxDomainRangePushEx,
    CUPTI_CBID_NVTX_nvtxDomainRangePop};

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
  if (config_.scope == MetricsScope::kKernel && IsLaunchCallback(domain, cbid)) {
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
    // Capture ranges: only launches while a range is open (not counted
    // toward the selection either, so --launch-skip counts inside ranges).
    if (CaptureGate().load(std::memory_order_acquire) == kCaptureClosed) return;
    // A program's first runtime launch may create its context: without one
    // yet, this launch is not counted (never a reason to give up counting).
    CUcontext ctx = cb->context ? cb->context : api_->CurrentContext();
    if (ctx == nullptr) return;
    const char* symbol = cb->symbolName;
    std::string mangled = symbol ? symbol : "";
    // The collector's Demangle: "" for a name that is not a mangled C++ symbol.
    uint64_t launch_index = 0;
    if (!selector_.Select(mangled, Demangle(mangled), &launch_index)) return;
    Context* c = Ensure(ctx);
    if (c == nullptr || !StartRange(*c)) return;
    t_counting = true;
    t_context = ctx;
    t_correlation = cb->correlationId;
    t_kernel_name = mangled.empty() ? 0 : interner_->Intern(mangled);
    t_launch_index = launch_index;
    return;
  }
  if (t_launch_depth == 0 || --t_launch_depth > 0) return;
  if (t_counting && !failed()) {
    auto it = contexts_.find(t_context);
    if (it != contexts_.end()) Collect(it->second, t_correlation, t_kernel_name, t_launch_index);
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
    // An outermost range is counted unless a capture range says otherwise;
    // ranges inside a counted one are pushed too (CUPTI counts level 1).
    const bool outermost = c->depth == 0;
    const bool counted = !outermost ||
                         (CaptureGate().load(std::memory_order_acquire) != kCaptureClosed &&
                          (config_.nvtx_only.empty() || name == config_.nvtx_only));
    c->stack.push_back(counted);
    if (!counted) return;
    if (!c->started && !StartRange(*c)) return;
    std::string pushed = name;
    if (outermost) {
      // CUPTI adds up same-named ranges of a pass: each instance gets its own name.
      const uint64_t n = ++next_instance_;
      pushed += kInstanceTag + std::to_string(n);
      Instance& in = instances_[n];
      in.name_id = interner_->Intern(name);
      in.thread_id = static_cast<uint64_t>(::syscall(SYS_gettid));
      in.start_ns = Now();
      c->instance = n;
    }
    auto p = Params<CUpti_RangeProfiler_PushRange_Params>(CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = c->object;
    p.pRangeName = pushed.c_str();
    if (CUptiResult r = api_->PushRange(&p); r != CUPTI_SUCCESS) return Fail("cuptiRangeProfilerPushRange", r);
    ++c->depth;
    return;
  }
  if (c->stack.empty()) return;  // a pop of a range pushed before counting began
  const bool counted = c->stack.back();
  c->stack.pop_back();
  if (!counted || c->depth == 0) return;
  auto p = Params<CUpti_RangeProfiler_PopRange_Params>(CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
  p.pRangeProfilerObject = c->object;
  if (CUptiResult r = api_->PopRange(&p); r != CUPTI_SUCCESS) return Fail("cuptiRangeProfilerPopRange", r);
  if (--c->depth == 0) {
    if (auto it = instances_.find(c->instance); it != instances_.end()) it->second.end_ns = Now();
    if (++c->closed >= kNvtxRanges) Collect(*c, 0, 0);
  }
}

void RangeProfiler::FillInstance(const std::string& cupti_name, CounterSampleInfo* s) {
  // "NAME<tag>N", possibly followed by nested levels ("/child") if CUPTI
  // reports them; anything else is kept as CUPTI named it.
  const size_t tag = cupti_name.rfind(kInstanceTag);
  if (tag == std::string::npos) {
    s->range_name_id = interner_->Intern(cupti_name);
    return;
  }
  const size_t digits = tag + std::char_traits<char>::length(kInstanceTag);
  const uint64_t n = std::strtoull(cupti_name.c_str() + digits, nullptr, 10);
  auto it = instances_.find(n);
  if (it == instances_.end()) {
    s->range_name_id = interner_->Intern(cupti_name.substr(0, tag));
    return;
  }
  s->range_name_id = it->second.name_id;
  s->thread_id = it->second.thread_id;
  s->start_ns = it->second.start_ns;
  s->end_ns = it->second.end_ns;
  instances_.erase(it);
}

bool RangeProfiler::StartRange(Context& c) {
  auto p = Params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  p.pRangeProfilerObject = c.object;
  CUptiResult r = api_->Start(&p);
  if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_INSUFFICIENT_PRIVILEGES && r != CUPTI_ERROR_HARDWARE_BUSY) {
    // After a reset some versions want the configuration again.
    if (ApplyConfig(c) == CUPTI_SUCCESS) r = api_->Start(&p);
  }
  if (r != CUPTI_SUCCESS) {
    Fail("cuptiRangeProfilerStart", r);
    return false;
  }
  c.started = true;
  return true;
}

void RangeProfiler::Collect(Context& c, uint64_t correlation_id, uint32_t kernel_name_id, uint64_t launch_index) {
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
      FillInstance(name, &s);
    } else {
      s.correlation_id = correlation_id;
      s.kernel_name_id = kernel_name_id;
      s.launch_index = launch_index;
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
  if (RangeProfiler* p = CurrentProfiler().load(std::memory_order_acquire)) p->OnCallback(domain, cbid, data);
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
  CurrentProfiler().store(profiler, std::memory_order_release);
  return true;
}

void FinishCounters() {
  if (RangeProfiler* p = CurrentProfiler().load(std::memory_order_acquire)) p->Finish();
}

}  // namespace cutrace::injection
