// Session: the production modes' part (issue 5) — creating the
// ProductionController (injection/control.h) and turning the traced activity
// kinds on and off around continuous mode's windows. The start-up half is in
// session.cc, the callbacks and shutdown in session_callbacks.cc.
#include "injection/api_filter.h"
#include "injection/clock.h"
#include "injection/log.h"
#include "injection/session.h"

namespace cutrace::injection {

void Session::StartProduction() {
  ProductionConfig production = ParseProductionConfig(env_);
  for (const std::string& p : production.problems) Log(LogLevel::kWarn, "%s", p.c_str());
  if (!production.active()) return;
  std::vector<std::string> problems;
  MemoryBudget budget = ApplyMemoryCap(production, &config_, &problems);
  for (const std::string& p : problems) Log(LogLevel::kInfo, "%s", p.c_str());
  ProductionController::Callbacks cb;
  cb.stats = [this](const TraceWriter& w) { return CollectStats(w); };
  cb.set_activity = [this](bool on) { SetActivity(on); };
  // No cutrace lock is held by the control thread here: CUPTI calls
  // OnCompleted from inside FlushAll.
  cb.flush_activity = [this] {
    CUptiResult r = FlushOwnBuffers();
    if (r != CUPTI_SUCCESS) {
      Log(LogLevel::kDebug, "cuptiActivityFlushAll at a window's end: %s", api_->ResultString(r).c_str());
    }
  };
  cb.now = [this]() -> int64_t {
    if (clock_ == ClockDomain::kMonotonic) return static_cast<int64_t>(MonotonicNs());
    uint64_t t = 0;
    return api_ && api_->GetTimestamp(&t) == CUPTI_SUCCESS ? static_cast<int64_t>(t)
                                                           : static_cast<int64_t>(MonotonicNs());
  };
  production_ = std::make_unique<ProductionController>(std::move(production), budget, std::move(cb));
  Log(LogLevel::kInfo, "mode %s", ModeName(production_->config().mode));
}

bool Session::has_flight_recorder() const {
  return production_ != nullptr && production_->config().flight_recorder();
}

void Session::SetActivity(bool on) {
  // After the program's own CUPTI client took the activity API, cutrace's
  // windows no longer switch anything (session_handover.cc).
  if (yielded()) return;
  if (on) {
    EnableKinds();
  } else {
    DisableKinds(/*all=*/false);
  }
}

CUptiResult Session::FlushOwnBuffers() {
  // Once the program's own client has the activity API, every buffer CUPTI
  // holds is that client's: cutrace's came back at the hand-over.
  return yielded() ? CUPTI_SUCCESS : api_->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
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

}  // namespace cutrace::injection
