// Session: which activity CUPTI records — the clock and settings applied
// before any kind (and again after a re-attach), the kinds and API calls
// turned on (EnableKinds) and off (DisableKinds), per continuous-mode
// window and capture range (SetActivity), and a forced flush of cutrace's
// own buffers.
#include "injection/api_filter.h"
#include "injection/log.h"
#include "injection/session/session.h"

namespace cutrace::injection {

void Session::ConfigureActivity() {
  // Before any kind is enabled, so every record uses one clock.
  if (!config_.timestamp_callback) {
    clock_ = ClockDomain::kCupti;
    Log(LogLevel::kDebug, "CUTRACE_TIMESTAMP_CALLBACK=0: timestamps stay on CUPTI's clock");
  } else if (api_->ProgramHasOwnClient()) {
    // The callback is process-wide: it would put the program's own profiler
    // (torch.profiler saw none of its kernels) on a clock it does not expect.
    clock_ = ClockDomain::kCupti;
    Log(LogLevel::kDebug, "the program has a CUPTI client of its own: timestamps stay on CUPTI's clock");
  } else if (api_->ActivityRegisterTimestampCallback(&MonotonicTimestampCallback) == CUPTI_SUCCESS) {
    clock_ = ClockDomain::kMonotonic;
  } else {
    clock_ = ClockDomain::kCupti;
    Log(LogLevel::kDebug, "timestamp callback unavailable: timestamps stay on CUPTI's clock");
  }
  ApplyActivitySettings();
}

void Session::ApplyActivitySettings() {
  if (config_.latency_timestamps) {
    CUptiResult r = api_->ActivityEnableLatencyTimestamps(1);
    if (r != CUPTI_SUCCESS) {
      Log(LogLevel::kWarn, "cannot set CUTRACE_LATENCY_TIMESTAMPS: %s", api_->ResultString(r).c_str());
    }
  }
  // Thread ids in API and NVTX records become the kernel's tids (gettid).
  if (api_->SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) != CUPTI_SUCCESS) {
    Log(LogLevel::kDebug, "cuptiSetThreadIdType(SYSTEM) failed: thread ids are CUPTI's");
  }
  if (config_.per_thread_buffers) {
    uint8_t value = *config_.per_thread_buffers ? 1 : 0;
    size_t size = sizeof(value);
    CUptiResult r =
        api_->ActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &size, &value);
    if (r != CUPTI_SUCCESS) {
      Log(LogLevel::kWarn, "cannot set CUTRACE_PER_THREAD_BUFFERS: %s", api_->ResultString(r).c_str());
    }
  }
  if (config_.flush_period_ms > 0) {
    CUptiResult r = api_->ActivityFlushPeriod(config_.flush_period_ms);
    if (r != CUPTI_SUCCESS) {
      Log(LogLevel::kWarn, "cannot set CUTRACE_FLUSH_PERIOD_MS: %s", api_->ResultString(r).c_str());
    }
  }
}

void Session::EnableKinds(ApiSwitch api) {
  auto enable = [this](CUpti_ActivityKind kind, const char* what) {
    CUptiResult r = api_->ActivityEnable(kind);
    if (r != CUPTI_SUCCESS) {
      Log(LogLevel::kWarn, "cannot record %s (cuptiActivityEnable: %s)", what,
          api_->ResultString(r).c_str());
    }
  };
  const Kinds& k = config_.kinds;
  // CONCURRENT_KERNEL, never KERNEL: KERNEL serializes every kernel.
  if (k.kernel) enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernels");
  if (k.memcpy) {
    enable(CUPTI_ACTIVITY_KIND_MEMCPY, "memory copies");
    enable(CUPTI_ACTIVITY_KIND_MEMCPY2, "peer-to-peer copies");
  }
  if (k.memset) enable(CUPTI_ACTIVITY_KIND_MEMSET, "memsets");
  if (k.nvtx) {
    enable(CUPTI_ACTIVITY_KIND_MARKER, "NVTX ranges");
    enable(CUPTI_ACTIVITY_KIND_MARKER_DATA, "NVTX colors");
  }
  if (k.sync) enable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "synchronization");
  if (k.runtime_api) EnableApiRecords(/*runtime=*/true, api);
  if (k.driver_api) EnableApiRecords(/*runtime=*/false, api);
  // Cheap, and they give the header devices and sync records their device.
  enable(CUPTI_ACTIVITY_KIND_DEVICE, "devices");
  enable(CUPTI_ACTIVITY_KIND_CONTEXT, "contexts");
  // CUPTI's overhead records (the statistics' "CUPTI" time): a kind of
  // their own (CUTRACE_KINDS word "overhead"), so a narrowed list (say,
  // kernel) means only those records compete for buffers, and CUPTI's
  // dropped-record count, which does not say of which kind, is exactly theirs.
  if (k.overhead) enable(CUPTI_ACTIVITY_KIND_OVERHEAD, "CUPTI overhead");
}

void Session::EnableProcessKinds() {
  for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT}) {
    if (CUptiResult r = api_->ActivityEnable(kind); r != CUPTI_SUCCESS) {
      Log(LogLevel::kDebug, "cuptiActivityEnable(%d): %s", static_cast<int>(kind), api_->ResultString(r).c_str());
    }
  }
}

void Session::EnableApiRecords(bool runtime, ApiSwitch api) {
  // Per call only at the start, inside cuInit: on the H200 (CUDA 13.0),
  // cuptiActivityEnableRuntimeApi/DriverApi(cbid, 1) made once CUDA runs
  // return CUPTI_SUCCESS for every call and record none of them, whether
  // the kind was on and off before (continuous mode's windows) or never
  // (a capture range's first open): 0 API records in every such window.
  // There the whole domain goes on, which does record, filtered at
  // conversion (tests/gpu/capture.py checks the captured launches).
  if (api == ApiSwitch::kWholeDomain) {
    EnableApiDomain(runtime);
    return;
  }
  const CUpti_CallbackDomain domain = runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
  const uint32_t count = runtime ? static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE)
                                 : static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_SIZE);
  const ApiDomain api_domain = runtime ? ApiDomain::kRuntime : ApiDomain::kDriver;
  int enabled = 0;
  bool per_call = true;
  for (uint32_t cbid = 1; cbid < count && per_call; ++cbid) {
    const char* name = nullptr;
    if (api_->GetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    if (!IsTracedApi(api_domain, name)) continue;
    CUptiResult r = runtime ? api_->ActivityEnableRuntimeApi(cbid, 1)
                            : api_->ActivityEnableDriverApi(cbid, 1);
    if (r == CUPTI_SUCCESS) {
      ++enabled;
    } else if (enabled == 0) {
      per_call = false;  // not supported: fall back to the whole domain
    }
  }
  if (per_call && enabled > 0) {
    Log(LogLevel::kDebug, "recording %d %s API calls", enabled, runtime ? "runtime" : "driver");
    return;
  }
  EnableApiDomain(runtime);
}

void Session::EnableApiDomain(bool runtime) {
  // Every call of the domain (cutrace's own cuKernelGetName among them),
  // filtered at conversion.
  processor_->set_filter_api(true);
  CUptiResult r = api_->ActivityEnable(runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER);
  if (r != CUPTI_SUCCESS) {
    Log(LogLevel::kWarn, "cannot record %s API calls (cuptiActivityEnable: %s)",
        runtime ? "runtime" : "driver", api_->ResultString(r).c_str());
  }
}

void Session::DisableKinds(bool all) {
  // The kinds EnableKinds() turned on; DEVICE and CONTEXT only with `all`
  // (their records come once per device or context, and describe the
  // process rather than its work).
  auto off = [this](CUpti_ActivityKind kind) {
    CUptiResult r = api_->ActivityDisable(kind);
    if (r != CUPTI_SUCCESS) {
      Log(LogLevel::kDebug, "cuptiActivityDisable(%d): %s", static_cast<int>(kind),
          api_->ResultString(r).c_str());
    }
  };
  const Kinds& k = config_.kinds;
  if (k.kernel) off(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (k.memcpy) {
    off(CUPTI_ACTIVITY_KIND_MEMCPY);
    off(CUPTI_ACTIVITY_KIND_MEMCPY2);
  }
  if (k.memset) off(CUPTI_ACTIVITY_KIND_MEMSET);
  if (k.nvtx) {
    off(CUPTI_ACTIVITY_KIND_MARKER);
    off(CUPTI_ACTIVITY_KIND_MARKER_DATA);
  }
  if (k.sync) off(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  for (bool runtime : {true, false}) {
    if (runtime ? !k.runtime_api : !k.driver_api) continue;
    const CUpti_CallbackDomain domain = runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
    const uint32_t count = runtime ? static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE)
                                   : static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_SIZE);
    const ApiDomain api_domain = runtime ? ApiDomain::kRuntime : ApiDomain::kDriver;
    for (uint32_t cbid = 1; cbid < count; ++cbid) {
      const char* name = nullptr;
      if (api_->GetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
      if (!IsTracedApi(api_domain, name)) continue;
      if ((runtime ? api_->ActivityEnableRuntimeApi(cbid, 0) : api_->ActivityEnableDriverApi(cbid, 0)) !=
          CUPTI_SUCCESS) {
        break;  // per-call switching unsupported: the whole domain below
      }
    }
    off(runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER);
  }
  // CUPTI's overhead records off between windows too, so nothing there asks
  // CUPTI for per-launch work.
  if (k.overhead) off(CUPTI_ACTIVITY_KIND_OVERHEAD);
  if (all) {
    off(CUPTI_ACTIVITY_KIND_DEVICE);
    off(CUPTI_ACTIVITY_KIND_CONTEXT);
  }
}

void Session::SetActivity(bool on) {
  // After the program's own CUPTI client took the activity API, cutrace's
  // windows no longer switch anything (client_handover.cc).
  if (yielded()) return;
  // The control thread (continuous windows), or, for capture ranges, the
  // thread whose call opened or closed a range, with the controller's
  // capture lock held: one caller at a time. A window whose kinds did not go on (CUPTI could not
  // be attached again) turns nothing off either: that CUPTI may be another
  // tool's now, and every call would attach it.
  if (on) {
    std::lock_guard<std::mutex> lock(attach_mu_);
    window_kinds_on_ = Reattach();
    if (window_kinds_on_) EnableKinds(ApiSwitch::kWholeDomain);  // CUDA runs by now
  } else if (window_kinds_on_) {
    window_kinds_on_ = false;
    DisableKinds(/*all=*/false);
  }
}

CUptiResult Session::FlushOwnBuffers() {
  // Once the program's own client has the activity API, every buffer CUPTI
  // holds is that client's: cutrace's came back at the hand-over. Anywhere
  // but attached (a detach asked for, under way or done), the window's flush
  // came first and CUPTI holds none of cutrace's.
  if (yielded() || !attach_.attached()) return CUPTI_SUCCESS;
  return api_->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

}  // namespace cutrace::injection
