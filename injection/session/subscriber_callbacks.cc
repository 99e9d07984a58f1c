// Session: the callbacks of cutrace's CUPTI subscriber — module unloads (a
// forced flush first, so kernel names are read while valid), kernel
// launches (their names, once a module was unloaded: launch_names.h), graph
// calls (continuous mode's detaching stops), the runtime API exit where a
// requested detach happens, and the counters' callbacks (range_profiler.h).
#include <unistd.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "injection/cupti/launch_callbacks.h"
#include "injection/log.h"
#include "injection/counters/range_profiler.h"
#include "injection/session/session.h"

namespace cutrace::injection {

void CUPTIAPI Session::SubscriberCallback(void* userdata, CUpti_CallbackDomain domain,
                                          CUpti_CallbackId cbid, const void* data) {
  try {
    // Graph calls matter only while detaching is on (their callbacks are on
    // only then): the lists are not searched on every other call.
    if (Session* s = Active(); s != nullptr && s->attach_.enabled_relaxed() && IsGraphCallback(domain, cbid)) {
      s->OnGraphCall();
    }
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
      // Continuous mode asked to detach at the next runtime API exit
      // (detach.cc): not a driver call's, which may sit inside a
      // runtime call whose own exit would then run in a CUPTI torn down.
      const auto* cb = static_cast<const CUpti_CallbackData*>(data);
      Session* s = Active();
      if (s != nullptr && cb != nullptr && cb->callbackSite == CUPTI_API_EXIT &&
          s->attach_.detach_pending() && ::getpid() == s->pid_) {
        s->DetachNow();
        return;
      }
    }
    if (IsLaunchCallback(domain, cbid)) {
      if (Session* s = Active()) s->OnLaunch(static_cast<const CUpti_CallbackData*>(data));
    }
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
        (cbid == CUPTI_DRIVER_TRACE_CBID_cuModuleUnload || cbid == CUPTI_DRIVER_TRACE_CBID_cuLibraryUnload)) {
      const auto* cb = static_cast<const CUpti_CallbackData*>(data);
      if (cb == nullptr || cb->callbackSite == CUPTI_API_ENTER) {
        if (Session* s = Active()) s->OnModuleUnload();
      }
      return;
    }
    // Capture ranges' triggers (capture_link.cc); NVTX calls go on to the
    // counters too.
    if (Session* s = Active(); s != nullptr && s->capture_callbacks_.load(std::memory_order_relaxed)) {
      s->OnCaptureCallback(domain, cbid, data);
    }
    CounterCallback(userdata, domain, cbid, data);
  } catch (...) {
    LogRaw("internal error in a CUPTI callback; cutrace goes on");
  }
}

bool Session::EnableApiCallbacks(std::span<const CUpti_CallbackId> runtime,
                                 std::span<const CUpti_CallbackId> driver) {
  bool ok = true;
  for (CUpti_CallbackId cbid : runtime)
    ok &= api_->EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API, cbid) == CUPTI_SUCCESS;
  for (CUpti_CallbackId cbid : driver)
    ok &= api_->EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid) == CUPTI_SUCCESS;
  return ok;
}

void Session::EnableOwnCallbacks() {
  // The API entry, not CUPTI's MODULE_UNLOAD_STARTING resource callback: a
  // flush from inside that one never returned on the H200 (CUDA 13.0).
  CUptiResult r = CUPTI_SUCCESS;
  for (CUpti_CallbackId cbid : {CUPTI_DRIVER_TRACE_CBID_cuModuleUnload, CUPTI_DRIVER_TRACE_CBID_cuLibraryUnload}) {
    if (r == CUPTI_SUCCESS) r = api_->EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  }
  if (r != CUPTI_SUCCESS) {
    Log(LogLevel::kDebug, "no module-unload callback (%s): names of kernels from unloaded modules "
        "may be stale", api_->ResultString(r).c_str());
  }
  if (launch_names_.active()) EnableLaunchCallbacks();
  WatchForGraphs();  // continuous mode detaching (detach.cc)
}

void Session::OnLaunch(const CUpti_CallbackData* cb) {
  if (cb == nullptr || cb->callbackSite != CUPTI_API_ENTER || cb->symbolName == nullptr) return;
  if (!launch_names_.active()) return;
  launch_names_.Put(cb->correlationId, interner_.Intern(cb->symbolName));
}

void Session::CaptureLaunchNames() {
  if (!launch_names_.Activate()) return;
  const bool ok = EnableLaunchCallbacks();
  Log(LogLevel::kDebug, "a module was unloaded: kernel names are taken at launch from now on%s",
      ok ? "" : " (some launch callbacks could not be enabled)");
}

bool Session::EnableLaunchCallbacks() { return EnableApiCallbacks(kRuntimeLaunches, kDriverLaunches); }

bool Session::EnableGraphCallbacks() { return EnableApiCallbacks(kRuntimeGraphCalls, kDriverGraphCalls); }

void Session::OnModuleUnload() {
  // Before the driver unloads anything (the API call's entry), the module's
  // kernel records are flushed — forced, because the buffer holding its last
  // kernels is rarely full — so their names are read while valid. The flush
  // runs on a thread of its own, waited for at most kUnloadFlushWait: if
  // CUPTI cannot flush while this thread is in the call, the program goes on
  // after that wait, and flushing at unloads stops for good.
  if (!running() || yielded()) return;
  // Continuous mode's detach waits for this flush (DetachBlocked), and this
  // flush is not made where a detach was asked for or is done: then the
  // window's flush came first and no kind is on. Counted before the state is
  // read, so that a detach asked for meanwhile sees the count (seq_cst).
  unloads_in_flight_.fetch_add(1, std::memory_order_seq_cst);
  struct InFlight {
    std::atomic<int>& n;
    ~InFlight() { n.fetch_sub(1, std::memory_order_seq_cst); }
  } in_flight{unloads_in_flight_};
  if (!attach_.attached()) {
    // Names at launch from the next window on (EnableOwnCallbacks).
    launch_names_.Activate();
    return;
  }
  CaptureLaunchNames();
  if (unload_flush_stuck_.load(std::memory_order_acquire)) return;
  struct Wait {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
  };
  auto wait = std::make_shared<Wait>();
  CuptiApi* api = api_.get();
  try {
    std::thread([api, wait] {
      api->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
      std::lock_guard<std::mutex> lock(wait->mu);
      wait->done = true;
      wait->cv.notify_all();
    }).detach();
  } catch (...) {
    return;  // no thread: no flush, the names may be stale
  }
  std::unique_lock<std::mutex> lock(wait->mu);
  if (!wait->cv.wait_for(lock, kUnloadFlushWait, [&] { return wait->done; })) {
    unload_flush_stuck_.store(true, std::memory_order_release);
    Log(LogLevel::kWarn, "a flush before a module unload did not finish in %lld ms: no more such "
        "flushes; names of kernels from unloaded modules may be wrong",
        static_cast<long long>(kUnloadFlushWait.count()));
  }
}

}  // namespace cutrace::injection
