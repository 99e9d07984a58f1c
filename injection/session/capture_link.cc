// Session: capture ranges' triggers (production/capture_range.h). The
// program's cudaProfilerStart/Stop (runtime and driver) and NVTX range calls
// reach cutrace as CUPTI callbacks on its subscriber; each becomes a
// CaptureRange event for the ProductionController, which opens and closes
// the ranges. A start counts at its call's exit (the kinds are on before
// the call returns), a stop at its entry (nothing the program does after it
// is recorded).
#include <sys/syscall.h>
#include <unistd.h>

#include <cwchar>

#include <generated_nvtx_meta.h>

#include "injection/log.h"
#include "injection/session/session.h"

namespace cutrace::injection {
namespace {

using Trigger = CaptureRangeConfig::Trigger;
using EventKind = CaptureRange::Event::Kind;

constexpr CUpti_CallbackId kNvtxCaptureCallbacks[] = {
    CUPTI_CBID_NVTX_nvtxRangePushA,        CUPTI_CBID_NVTX_nvtxRangePushW,
    CUPTI_CBID_NVTX_nvtxRangePushEx,       CUPTI_CBID_NVTX_nvtxRangePop,
    CUPTI_CBID_NVTX_nvtxRangeStartA,       CUPTI_CBID_NVTX_nvtxRangeStartW,
    CUPTI_CBID_NVTX_nvtxRangeStartEx,      CUPTI_CBID_NVTX_nvtxRangeEnd,
    CUPTI_CBID_NVTX_nvtxDomainRangePushEx, CUPTI_CBID_NVTX_nvtxDomainRangePop,
    CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, CUPTI_CBID_NVTX_nvtxDomainRangeEnd,
    CUPTI_CBID_NVTX_nvtxDomainCreateA};

// Wide NVTX strings: matched when they are plain ASCII.
std::string Narrow(const wchar_t* w) {
  std::string s;
  if (w == nullptr) return s;
  for (; *w != L'\0'; ++w) s.push_back(*w > 0 && *w < 128 ? static_cast<char>(*w) : '?');
  return s;
}

std::string Message(const nvtxEventAttributes_t* a) {
  if (a == nullptr) return {};
  if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii) return a->message.ascii;
  if (a->messageType == NVTX_MESSAGE_TYPE_UNICODE && a->message.unicode) return Narrow(a->message.unicode);
  return {};  // a registered string: its text is not in the call
}

template <typename T>
const T* Params(const CUpti_NvtxData* d) {
  return static_cast<const T*>(d->functionParams);
}

uint64_t ReturnedRangeId(const CUpti_NvtxData* d) {
  return d->functionReturnValue ? *static_cast<const nvtxRangeId_t*>(d->functionReturnValue) : 0;
}

}  // namespace

bool Session::NeedsCaptureCallbacks() const {
  return capturing() && production_->config().capture.trigger != Trigger::kNone;
}

void Session::StartCaptureCallbacks() {
  if (!NeedsCaptureCallbacks()) return;
  const CaptureRangeConfig& c = production_->config().capture;
  bool ok = true;
  if (c.trigger == Trigger::kProfilerApi) {
    ok &= api_->EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API,
                               CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000) == CUPTI_SUCCESS;
    ok &= api_->EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API,
                               CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000) == CUPTI_SUCCESS;
    ok &= api_->EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart) ==
          CUPTI_SUCCESS;
    ok &= api_->EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop) ==
          CUPTI_SUCCESS;
  } else {
    for (CUpti_CallbackId id : kNvtxCaptureCallbacks)
      ok &= api_->EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_NVTX, id) == CUPTI_SUCCESS;
  }
  capture_callbacks_.store(true, std::memory_order_release);
  if (!ok) {
    Log(LogLevel::kWarn, "capture range %s: some of its CUPTI callbacks could not be enabled; the range "
        "may never open", c.Describe().c_str());
  }
}

std::string Session::NvtxDomainName(const void* handle) {
  if (handle == nullptr) return "";
  std::lock_guard<std::mutex> lock(nvtx_domains_mu_);
  auto it = nvtx_domains_.find(handle);
  return it == nvtx_domains_.end() ? "?" : it->second;
}

void Session::OnCaptureCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (data == nullptr || ::getpid() != pid_ || !running()) return;
  CaptureRange::Event e;
  e.thread = static_cast<uint64_t>(::syscall(SYS_gettid));
  std::string name, dom;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
    const bool start = runtime ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000
                               : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
    const bool stop = runtime ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000
                              : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop;
    if (!start && !stop) return;
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    if (start && cb->callbackSite != CUPTI_API_EXIT) return;
    if (stop && cb->callbackSite != CUPTI_API_ENTER) return;
    e.kind = start ? EventKind::kProfilerStart : EventKind::kProfilerStop;
    production_->OnCaptureEvent(e);
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_NVTX) return;
  const auto* d = static_cast<const CUpti_NvtxData*>(data);
  if (d->functionParams == nullptr) return;
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxDomainCreateA: {
      if (d->functionReturnValue == nullptr) return;
      const void* handle = *static_cast<const nvtxDomainHandle_t*>(d->functionReturnValue);
      // The wide variant's parameters are not in CUPTI's header: its
      // domains stay unnamed ("?"), so nvtx:NAME@DOMAIN never matches them.
      if (cbid != CUPTI_CBID_NVTX_nvtxDomainCreateA) return;
      const char* n = Params<nvtxDomainCreateA_params>(d)->name;
      std::string created = n != nullptr ? n : "";
      std::lock_guard<std::mutex> lock(nvtx_domains_mu_);
      if (handle != nullptr && nvtx_domains_.size() < 4096) nvtx_domains_[handle] = std::move(created);
      return;
    }
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      e.kind = EventKind::kPush;
      if (const char* m = Params<nvtxRangePushA_params>(d)->message) name = m;
      break;
    case CUPTI_CBID_NVTX_nvtxRangePushW:
      e.kind = EventKind::kPush;
      name = Narrow(Params<nvtxRangePushW_params>(d)->message);
      break;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      e.kind = EventKind::kPush;
      name = Message(Params<nvtxRangePushEx_params>(d)->eventAttrib);
      break;
    case CUPTI_CBID_NVTX_nvtxRangePop:
      e.kind = EventKind::kPop;
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
      e.kind = EventKind::kPush;
      dom = NvtxDomainName(Params<nvtxDomainRangePushEx_params>(d)->domain);
      name = Message(Params<nvtxDomainRangePushEx_params>(d)->core.eventAttrib);
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      e.kind = EventKind::kPop;
      dom = NvtxDomainName(Params<nvtxDomainRangePop_params>(d)->domain);
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
      e.kind = EventKind::kStart;
      if (const char* m = Params<nvtxRangeStartA_params>(d)->message) name = m;
      e.range_id = ReturnedRangeId(d);
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartW:
      e.kind = EventKind::kStart;
      name = Narrow(Params<nvtxRangeStartW_params>(d)->message);
      e.range_id = ReturnedRangeId(d);
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      e.kind = EventKind::kStart;
      name = Message(Params<nvtxRangeStartEx_params>(d)->eventAttrib);
      e.range_id = ReturnedRangeId(d);
      break;
    case CUPTI_CBID_NVTX_nvtxRangeEnd:
      e.kind = EventKind::kEnd;
      e.range_id = Params<nvtxRangeEnd_params>(d)->id;
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
      e.kind = EventKind::kStart;
      dom = NvtxDomainName(Params<nvtxDomainRangeStartEx_params>(d)->domain);
      name = Message(Params<nvtxDomainRangeStartEx_params>(d)->core.eventAttrib);
      e.range_id = ReturnedRangeId(d);
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
      e.kind = EventKind::kEnd;
      dom = NvtxDomainName(Params<nvtxDomainRangeEnd_params>(d)->domain);
      e.range_id = Params<nvtxDomainRangeEnd_params>(d)->core.id;
      break;
    default:
      return;
  }
  // A start/end range whose id CUPTI did not hand over cannot be ended.
  if ((e.kind == EventKind::kStart || e.kind == EventKind::kEnd) && e.range_id == 0) return;
  e.name = name;
  e.domain = dom;
  production_->OnCaptureEvent(e);
}

}  // namespace cutrace::injection
