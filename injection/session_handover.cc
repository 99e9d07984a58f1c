// Session: handing CUPTI's activity API over to the program's own client,
// and taking it back when that client is done.
//
// CUPTI has one pair of buffer callbacks per process. A client that calls
// cuptiActivityRegisterCallbacks after cutrace (torch.profiler's Kineto does
// at every profile) replaces cutrace's pair, and CUPTI then hands it the
// buffer cutrace had asked for and CUPTI was still filling: Kineto drops a
// buffer it did not allocate ("bufferCompleted called with unknown buffer"),
// so it lost every kernel of a short profile, and cutrace lost them too.
//
// So cutrace watches the objects that import libcupti (import_redirect.h
// rewrites their GOT slots for four functions):
//  - cuptiActivityRegisterCallbacks: before passing it on, cutrace takes its
//    own buffers back with a forced flush and turns its activity kinds off
//    (YieldActivity). The program's client starts from empty buffers of its
//    own and sees everything it asked for; cutrace records nothing meanwhile.
//  - cuptiActivityRegisterTimestampCallback: the client brings its own clock
//    (Kineto: TSC ticks or CLOCK_MONOTONIC) before it registers its buffers.
//    cutrace yields right there, so every record of its own is delivered and
//    checked on the clock it was taken with; when it takes the API back it
//    puts its own clock back (CUPTI's default, CLOCK_REALTIME ns, or
//    cutrace's CLOCK_MONOTONIC callback), so one trace keeps one clock.
//  - cuptiActivityEnable/Disable: whether that client has kernel records on.
//  - cuptiActivityFlushAll: a forced flush after the client turned kernel
//    records off is how a profile ends (Kineto: disable, then flush to read
//    its buffers); once it returned, every buffer is back with the client,
//    and cutrace registers its callbacks again and goes on (ResumeActivity).
// Both moments are warnings in the trace, so the gap is never silent.
#include <atomic>
#include <cstdint>
#include <iterator>
#include <mutex>

#include "injection/clock.h"
#include "injection/import_redirect.h"
#include "injection/log.h"
#include "injection/session.h"

namespace cutrace::injection {
namespace {

using RegisterFn = CUptiResult(CUPTIAPI*)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
using KindFn = CUptiResult(CUPTIAPI*)(CUpti_ActivityKind);
using FlushFn = CUptiResult(CUPTIAPI*)(uint32_t);
using ClockFn = CUptiResult(CUPTIAPI*)(CUpti_TimestampCallbackFunc);
std::atomic<RegisterFn> g_real_register{nullptr};
std::atomic<KindFn> g_real_enable{nullptr};
std::atomic<KindFn> g_real_disable{nullptr};
std::atomic<FlushFn> g_real_flush{nullptr};
std::atomic<ClockFn> g_real_clock{nullptr};
// Whether the program's own client has kernel records on (its calls only).
std::atomic<bool> g_client_kernels{false};

bool IsKernelKind(CUpti_ActivityKind kind) {
  return kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || kind == CUPTI_ACTIVITY_KIND_KERNEL;
}

// What the program's calls reach instead of libcupti's functions.
CUptiResult CUPTIAPI ProgramRegistersBuffers(CUpti_BuffersCallbackRequestFunc requested,
                                             CUpti_BuffersCallbackCompleteFunc completed) {
  if (requested != &Session::BufferRequested) {
    if (Session* s = Session::Active()) s->YieldActivity();
  }
  RegisterFn real = g_real_register.load(std::memory_order_acquire);
  return real != nullptr ? real(requested, completed) : CUPTI_ERROR_NOT_INITIALIZED;
}

CUptiResult CUPTIAPI ProgramSetsClock(CUpti_TimestampCallbackFunc fn) {
  Session* s = Session::Active();
  if (s != nullptr) s->YieldActivity();  // before records are stamped with the other clock
  ClockFn real = g_real_clock.load(std::memory_order_acquire);
  CUptiResult r = real != nullptr ? real(fn) : CUPTI_ERROR_NOT_INITIALIZED;
  if (r == CUPTI_SUCCESS && s != nullptr) s->NoteProgramClock();
  return r;
}

// The clocks cutrace puts back when it takes the activity API back.
uint64_t CUPTIAPI RealtimeClock() { return RealtimeNs(); }
uint64_t CUPTIAPI MonotonicClock() { return MonotonicTimestamp(); }

CUptiResult CUPTIAPI ProgramEnablesKind(CUpti_ActivityKind kind) {
  KindFn real = g_real_enable.load(std::memory_order_acquire);
  CUptiResult r = real != nullptr ? real(kind) : CUPTI_ERROR_NOT_INITIALIZED;
  if (r == CUPTI_SUCCESS && IsKernelKind(kind)) g_client_kernels.store(true, std::memory_order_release);
  return r;
}

CUptiResult CUPTIAPI ProgramDisablesKind(CUpti_ActivityKind kind) {
  KindFn real = g_real_disable.load(std::memory_order_acquire);
  CUptiResult r = real != nullptr ? real(kind) : CUPTI_ERROR_NOT_INITIALIZED;
  if (r == CUPTI_SUCCESS && IsKernelKind(kind)) g_client_kernels.store(false, std::memory_order_release);
  return r;
}

CUptiResult CUPTIAPI ProgramFlushes(uint32_t flag) {
  FlushFn real = g_real_flush.load(std::memory_order_acquire);
  CUptiResult r = real != nullptr ? real(flag) : CUPTI_ERROR_NOT_INITIALIZED;
  if ((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0 && !g_client_kernels.load(std::memory_order_acquire)) {
    if (Session* s = Session::Active()) s->ResumeActivity();
  }
  return r;
}

struct Watched {
  const char* name;
  void* replacement;
  void (*keep)(void* real);
};

const Watched kWatched[] = {
    {"cuptiActivityRegisterCallbacks", reinterpret_cast<void*>(&ProgramRegistersBuffers),
     [](void* f) { g_real_register.store(reinterpret_cast<RegisterFn>(f), std::memory_order_release); }},
    {"cuptiActivityEnable", reinterpret_cast<void*>(&ProgramEnablesKind),
     [](void* f) { g_real_enable.store(reinterpret_cast<KindFn>(f), std::memory_order_release); }},
    {"cuptiActivityDisable", reinterpret_cast<void*>(&ProgramDisablesKind),
     [](void* f) { g_real_disable.store(reinterpret_cast<KindFn>(f), std::memory_order_release); }},
    {"cuptiActivityFlushAll", reinterpret_cast<void*>(&ProgramFlushes),
     [](void* f) { g_real_flush.store(reinterpret_cast<FlushFn>(f), std::memory_order_release); }},
    {"cuptiActivityRegisterTimestampCallback", reinterpret_cast<void*>(&ProgramSetsClock),
     [](void* f) { g_real_clock.store(reinterpret_cast<ClockFn>(f), std::memory_order_release); }},
};

}  // namespace

void Session::WatchForOtherClient() {
  static std::once_flag once;  // GOT slots are the process's, not a session's
  // Whether the trace's clock is CUPTI's default (CLOCK_REALTIME ns), which
  // cutrace can put back after another client installed its own.
  if (clock_ == ClockDomain::kCupti) {
    uint64_t t = 0;
    const uint64_t real = RealtimeNs();
    cupti_clock_is_realtime_ = api_->GetTimestamp(&t) == CUPTI_SUCCESS &&
                               (t > real ? t - real : real - t) < 10'000'000'000ull;
  }
  std::call_once(once, [this] {
    // Every real function first: a redirected slot may be called at once.
    void* real[std::size(kWatched)];
    for (size_t i = 0; i < std::size(kWatched); ++i) {
      real[i] = api_->EntryPoint(kWatched[i].name);
      if (real[i] == nullptr) return;  // a test's fake CuptiApi, or a libcupti without it
      kWatched[i].keep(real[i]);
    }
    for (size_t i = 0; i < std::size(kWatched); ++i) {
      RedirectResult r = RedirectImports(kWatched[i].name, kWatched[i].replacement, real[i], "cupti");
      for (const std::string& o : r.objects) {
        Log(LogLevel::kDebug, "watching %s's calls to %s (a CUPTI client of its own)", o.c_str(),
            kWatched[i].name);
      }
      for (const std::string& f : r.failed) {
        Log(LogLevel::kDebug, "cannot watch %s's calls to %s: if it starts a CUPTI client, "
            "cutrace's last records may be lost", f.c_str(), kWatched[i].name);
      }
    }
  });
}

void Session::YieldActivity() {
  if (!running() || ::getpid() != pid_) return;
  std::lock_guard<std::mutex> lock(handover_mu_);
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
  DisableKinds(/*all=*/true);
  // One line per process: a profiler started every few minutes is no news.
  static std::atomic<bool> said{false};
  LogOnce(said, LogLevel::kWarn, "the program started a CUPTI client of its own (such as "
          "torch.profiler), which takes CUPTI's activity records: cutrace records no GPU "
          "activity while it runs");
  writer_->Post([at](TraceWriter& w, StringInterner&) {
    static_cast<void>(w.WriteWarning(  // errors surface at Finalize
        "the program started a CUPTI client of its own (such as torch.profiler), which took CUPTI's "
        "activity API: no GPU activity was recorded from here until it stopped",
        static_cast<int64_t>(at)));
  });
}

void Session::ResumeActivity() {
  if (!running() || ::getpid() != pid_ || !yielded()) return;
  std::lock_guard<std::mutex> lock(handover_mu_);
  if (!yielded()) return;
  CUptiResult r = api_->ActivityRegisterCallbacks(&Session::BufferRequested, &Session::BufferCompleted);
  if (r != CUPTI_SUCCESS) {
    Log(LogLevel::kDebug, "cannot take the activity API back (%s)", api_->ResultString(r).c_str());
    return;
  }
  if (program_clock_.exchange(false, std::memory_order_acq_rel)) {
    // Records from here on carry cutrace's clock again (the client installs
    // its own at its next start, which goes through ProgramSetsClock).
    CUpti_TimestampCallbackFunc mine = clock_ == ClockDomain::kMonotonic ? &MonotonicClock
                                       : cupti_clock_is_realtime_         ? &RealtimeClock
                                                                          : nullptr;
    ClockFn real = g_real_clock.load(std::memory_order_acquire);
    if (mine == nullptr || real == nullptr || real(mine) != CUPTI_SUCCESS) {
      Log(LogLevel::kDebug, "cannot put cutrace's clock back after the program's client: "
          "records after the hand-back may be on another clock");
      writer_->Post([](TraceWriter& w, StringInterner&) {
        static_cast<void>(w.WriteWarning(
            "the program's CUPTI client left its own clock in place: timestamps after it stopped "
            "may not match the ones before", static_cast<int64_t>(MonotonicNs())));
      });
    }
  }
  yielded_.store(false, std::memory_order_release);
  // Continuous mode turns kinds on at its next window; elsewhere they go on now.
  if (!production_ || production_->config().mode != Mode::kContinuous) EnableKinds();
  const uint64_t at = MonotonicNs();
  Log(LogLevel::kDebug, "the program's CUPTI client stopped: cutrace records GPU activity again");
  writer_->Post([at](TraceWriter& w, StringInterner&) {
    static_cast<void>(w.WriteWarning(  // errors surface at Finalize
        "the program's own CUPTI client stopped: GPU activity is recorded again from here",
        static_cast<int64_t>(at)));
  });
}

}  // namespace cutrace::injection
