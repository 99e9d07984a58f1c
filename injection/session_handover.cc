// Session: handing CUPTI's activity API over to the program's own client.
//
// CUPTI has one pair of buffer callbacks per process. A client that calls
// cuptiActivityRegisterCallbacks after cutrace (torch.profiler's Kineto does
// at every profile) replaces cutrace's pair, and CUPTI then hands it the
// buffer cutrace had asked for and CUPTI was still filling: Kineto drops a
// buffer it did not allocate ("bufferCompleted called with unknown buffer"),
// so it lost every kernel of a short profile, and cutrace lost them too.
//
// So cutrace watches for that call (import_redirect.h rewrites the GOT slots
// of the objects that import it from libcupti) and, before passing it on,
// takes its own buffers back with a forced flush and turns its activity kinds
// off. The program's client then starts from empty buffers of its own and
// sees everything; cutrace's trace ends there, and says so, once, on stderr
// and as a warning in the trace.
#include <atomic>
#include <mutex>

#include "injection/clock.h"
#include "injection/import_redirect.h"
#include "injection/log.h"
#include "injection/session.h"

namespace cutrace::injection {
namespace {

using RegisterFn = CUptiResult(CUPTIAPI*)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
std::atomic<RegisterFn> g_real_register{nullptr};

// What the program's calls to cuptiActivityRegisterCallbacks reach instead.
CUptiResult CUPTIAPI ProgramRegistersBuffers(CUpti_BuffersCallbackRequestFunc requested,
                                             CUpti_BuffersCallbackCompleteFunc completed) {
  if (requested != &Session::BufferRequested) {
    if (Session* s = Session::Active()) s->YieldActivity();
  }
  RegisterFn real = g_real_register.load(std::memory_order_acquire);
  return real != nullptr ? real(requested, completed) : CUPTI_ERROR_NOT_INITIALIZED;
}

}  // namespace

void Session::WatchForOtherClient() {
  static std::once_flag once;  // GOT slots are the process's, not a session's
  std::call_once(once, [this] {
    void* real = api_->EntryPoint("cuptiActivityRegisterCallbacks");
    if (real == nullptr) return;  // a test's fake CuptiApi
    g_real_register.store(reinterpret_cast<RegisterFn>(real), std::memory_order_release);
    RedirectResult r = RedirectImports("cuptiActivityRegisterCallbacks",
                                       reinterpret_cast<void*>(&ProgramRegistersBuffers), real, "cupti");
    for (const std::string& o : r.objects) {
      Log(LogLevel::kDebug, "watching %s for a CUPTI client of its own", o.c_str());
    }
    for (const std::string& f : r.failed) {
      Log(LogLevel::kDebug, "cannot watch %s for a CUPTI client of its own: if it starts one, "
          "cutrace's last records may be lost", f.c_str());
    }
  });
}

void Session::YieldActivity() {
  if (!running() || ::getpid() != pid_) return;
  if (yielded_.exchange(true, std::memory_order_acq_rel)) return;
  const uint64_t at = MonotonicNs();
  // Still cutrace's callbacks: every buffer CUPTI holds for cutrace comes
  // back to it now, before the program's client gets the API.
  CUptiResult r = api_->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (r != CUPTI_SUCCESS) {
    Log(LogLevel::kDebug, "cuptiActivityFlushAll before the hand-over: %s", api_->ResultString(r).c_str());
  }
  // Nothing of cutrace's goes into the other client's buffers: every kind it
  // turned on goes off (the client turns on what it wants next).
  SetKinds(false, /*all=*/true);
  Log(LogLevel::kWarn, "the program started a CUPTI client of its own (such as torch.profiler), which "
      "takes CUPTI's activity records: cutrace records no more GPU activity in this process");
  writer_->Post([at](TraceWriter& w, StringInterner&) {
    static_cast<void>(w.WriteWarning(  // errors surface at Finalize
        "the program started a CUPTI client of its own (such as torch.profiler), which took CUPTI's "
        "activity API: no GPU activity was recorded after this point",
        static_cast<int64_t>(at)));
  });
}

}  // namespace cutrace::injection
