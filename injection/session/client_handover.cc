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
//    (ClientHandover::Yield.)
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
#include "injection/session/client_handover.h"
#include "injection/session/import_redirect.h"
#include "injection/log.h"
#include "injection/process_state.h"
#include "injection/session/session.h"

namespace cutrace::injection {
namespace {

// The program's calls that cutrace watches, and libcupti's functions they
// reach through cutrace's wrappers.
enum Watched : size_t { kRegister, kEnable, kDisable, kFlush, kClock, kWatchedCount };
constexpr const char* kWatchedNames[kWatchedCount] = {
    "cuptiActivityRegisterCallbacks", "cuptiActivityEnable", "cuptiActivityDisable",
    "cuptiActivityFlushAll", "cuptiActivityRegisterTimestampCallback"};
static_assert(kWatchedCount == HandoverState::kWatchedCount);

using RegisterFn = CUptiResult(CUPTIAPI*)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
using KindFn = CUptiResult(CUPTIAPI*)(CUpti_ActivityKind);
using FlushFn = CUptiResult(CUPTIAPI*)(uint32_t);
using ClockFn = CUptiResult(CUPTIAPI*)(CUpti_TimestampCallbackFunc);

template <typename Fn>
Fn Real(Watched w) {
  return reinterpret_cast<Fn>(Handover().real[w].load(std::memory_order_acquire));
}

// Calls libcupti's function, or says CUPTI is not there.
template <typename Fn, typename... Args>
CUptiResult CallReal(Watched w, Args... args) {
  Fn real = Real<Fn>(w);
  return real != nullptr ? real(args...) : CUPTI_ERROR_NOT_INITIALIZED;
}

bool IsKernelKind(CUpti_ActivityKind kind) {
  return kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || kind == CUPTI_ACTIVITY_KIND_KERNEL;
}

// What the program's calls reach instead of libcupti's functions.
CUptiResult CUPTIAPI ProgramRegistersBuffers(CUpti_BuffersCallbackRequestFunc requested,
                                             CUpti_BuffersCallbackCompleteFunc completed) {
  if (requested != &Session::BufferRequested) {
    if (Session* s = Session::Active()) s->YieldActivity();
  }
  return CallReal<RegisterFn>(kRegister, requested, completed);
}

CUptiResult CUPTIAPI ProgramSetsClock(CUpti_TimestampCallbackFunc fn) {
  Session* s = Session::Active();
  if (s != nullptr) s->YieldActivity();  // before records are stamped with the other clock
  CUptiResult r = CallReal<ClockFn>(kClock, fn);
  if (r == CUPTI_SUCCESS && s != nullptr) s->NoteProgramClock();
  return r;
}

// The clocks cutrace puts back when it takes the activity API back.
uint64_t CUPTIAPI RealtimeClock() { return RealtimeNs(); }

CUptiResult CUPTIAPI ProgramEnablesKind(CUpti_ActivityKind kind) {
  CUptiResult r = CallReal<KindFn>(kEnable, kind);
  if (r == CUPTI_SUCCESS && IsKernelKind(kind)) Handover().client_kernels.store(true, std::memory_order_release);
  return r;
}

CUptiResult CUPTIAPI ProgramDisablesKind(CUpti_ActivityKind kind) {
  CUptiResult r = CallReal<KindFn>(kDisable, kind);
  if (r == CUPTI_SUCCESS && IsKernelKind(kind)) Handover().client_kernels.store(false, std::memory_order_release);
  return r;
}

CUptiResult CUPTIAPI ProgramFlushes(uint32_t flag) {
  CUptiResult r = CallReal<FlushFn>(kFlush, flag);
  if ((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0 && !Handover().client_kernels.load(std::memory_order_acquire)) {
    if (Session* s = Session::Active()) s->ResumeActivity();
  }
  return r;
}

const ImportRedirect kRedirects[kWatchedCount] = {
    {kWatchedNames[kRegister], reinterpret_cast<void*>(&ProgramRegistersBuffers)},
    {kWatchedNames[kEnable], reinterpret_cast<void*>(&ProgramEnablesKind)},
    {kWatchedNames[kDisable], reinterpret_cast<void*>(&ProgramDisablesKind)},
    {kWatchedNames[kFlush], reinterpret_cast<void*>(&ProgramFlushes)},
    {kWatchedNames[kClock], reinterpret_cast<void*>(&ProgramSetsClock)},
};

}  // namespace

void Session::WatchForOtherClient() {
  // Whether the trace's clock is CUPTI's default (CLOCK_REALTIME ns), which
  // cutrace can put back after another client installed its own.
  if (clock_ == ClockDomain::kCupti) {
    uint64_t t = 0;
    const uint64_t real = RealtimeNs();
    cupti_clock_is_realtime_ = api_->GetTimestamp(&t) == CUPTI_SUCCESS &&
                               (t > real ? t - real : real - t) < 10'000'000'000ull;
  }
  std::call_once(Handover().once, [this] {
    // Every real function first: a redirected slot may be called at once.
    for (size_t i = 0; i < kWatchedCount; ++i) {
      void* real = api_->EntryPoint(kWatchedNames[i]);
      if (real == nullptr) return;  // a test's fake CuptiApi, or a libcupti without it
      Handover().real[i].store(real, std::memory_order_release);
    }
    RedirectResult r = RedirectImports(kRedirects, Handover().real[kRegister].load(), "cupti");
    for (const std::string& o : r.objects) {
      Log(LogLevel::kDebug, "watching %s's calls to CUPTI's activity API (a CUPTI client of its own)",
          o.c_str());
    }
    for (const std::string& f : r.failed) {
      Log(LogLevel::kDebug, "cannot watch %s's calls to CUPTI: if it starts a CUPTI client, "
          "cutrace's last records may be lost", f.c_str());
    }
  });
}

void ClientHandover::Yield(Host& host) {
  if (!host.HandoverLive()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (yielded_.exchange(true, std::memory_order_acq_rel)) return;
  const uint64_t at = MonotonicNs();
  // Still cutrace's callbacks: every buffer CUPTI holds for cutrace comes
  // back to it now, before the program's client gets the API.
  CUptiResult r = host.FlushBeforeHandover();
  if (r != CUPTI_SUCCESS) {
    Log(LogLevel::kDebug, "cuptiActivityFlushAll before the hand-over: %s", host.ResultString(r).c_str());
  }
  // Nothing of cutrace's goes into the other client's buffers: every kind it
  // turned on goes off (the client turns on what it wants next).
  host.AllKindsOff();
  // One line per process: a profiler started every few minutes is no news.
  LogOnce(Said().client_started, LogLevel::kWarn, "the program started a CUPTI client of its own (such as "
          "torch.profiler), which takes CUPTI's activity records: cutrace records no GPU "
          "activity while it runs");
  host.PostWarning("the program started a CUPTI client of its own (such as torch.profiler), which took CUPTI's "
                   "activity API: no GPU activity was recorded from here until it stopped",
                   at);
}

void ClientHandover::Resume(Host& host) {
  if (!host.HandoverLive() || !yielded()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (!yielded()) return;
  CUptiResult r = host.RegisterBufferCallbacks();
  if (r != CUPTI_SUCCESS) {
    Log(LogLevel::kDebug, "cannot take the activity API back (%s)", host.ResultString(r).c_str());
    return;
  }
  if (program_clock_.exchange(false, std::memory_order_acq_rel)) {
    // Records from here on carry cutrace's clock again (the client installs
    // its own at its next start, which goes through ProgramSetsClock).
    CUpti_TimestampCallbackFunc mine = host.OwnClock();
    if (mine == nullptr || CallReal<ClockFn>(kClock, mine) != CUPTI_SUCCESS) {
      Log(LogLevel::kDebug, "cannot put cutrace's clock back after the program's client: "
          "records after the hand-back may be on another clock");
      host.PostWarning("the program's CUPTI client left its own clock in place: timestamps after it stopped "
                       "may not match the ones before",
                       std::nullopt);
    }
  }
  yielded_.store(false, std::memory_order_release);
  host.KindsBackOn();
  const uint64_t at = MonotonicNs();
  Log(LogLevel::kDebug, "the program's CUPTI client stopped: cutrace records GPU activity again");
  host.PostWarning("the program's own CUPTI client stopped: GPU activity is recorded again from here", at);
}

// Session's side: its Host, and the watch.

bool Session::HandoverHost::HandoverLive() const { return s.running() && ::getpid() == s.pid_; }

CUptiResult Session::HandoverHost::FlushBeforeHandover() {
  return s.api_->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void Session::HandoverHost::AllKindsOff() { s.DisableKinds(/*all=*/true); }

CUptiResult Session::HandoverHost::RegisterBufferCallbacks() {
  return s.api_->ActivityRegisterCallbacks(&Session::BufferRequested, &Session::BufferCompleted);
}

void Session::HandoverHost::KindsBackOn() {
  // Continuous mode turns kinds on at its next window; elsewhere they go on now.
  if (!s.production_ || s.production_->config().mode != Mode::kContinuous) {
    s.EnableKinds(ApiSwitch::kWholeDomain);
  }
}

void Session::HandoverHost::PostWarning(std::string text, std::optional<uint64_t> at) {
  s.writer_->Post([text = std::move(text), at](TraceWriter& w, StringInterner&) {
    // Errors surface at Finalize.
    static_cast<void>(w.WriteWarning(text, static_cast<int64_t>(at ? *at : MonotonicNs())));
  });
}

std::string Session::HandoverHost::ResultString(CUptiResult r) const { return s.api_->ResultString(r); }

CUpti_TimestampCallbackFunc Session::HandoverHost::OwnClock() const {
  return s.clock_ == ClockDomain::kMonotonic ? &MonotonicTimestampCallback
         : s.cupti_clock_is_realtime_        ? &RealtimeClock
                                             : nullptr;
}

}  // namespace cutrace::injection
