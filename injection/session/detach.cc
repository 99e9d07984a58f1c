// Session: the CUPTI calls around continuous mode's detach and re-attach
// (CUTRACE_DETACH). The states and transitions are CuptiAttachment's
// (cupti_attachment.h); here is what each one does to CUPTI: whether to
// detach at all, the request, the flush and cuptiFinalize at an API exit,
// the take-back, the re-attach before a window, and the exit's settling.
#include <unistd.h>

#include "injection/clock.h"
#include "injection/log.h"
#include "injection/session/session.h"

namespace cutrace::injection {

void Session::DecideDetach(bool counting) {
  // Continuous mode between windows, and capture ranges once the last range
  // closed (capture_control.cc asks only then).
  if (!production_ || (production_->config().mode != Mode::kContinuous && !capturing())) return;
  // cuptiFinalize is process-wide, and takes the counters' and the clock's
  // state with it: only where cutrace is CUPTI's one client, counts nothing
  // and stamps records with its own CLOCK_MONOTONIC callback (CUPTI's clock
  // would be read between windows, attaching CUPTI again). A CUPTI client
  // the program brings is known from its libraries at start
  // (ProgramHasOwnClient); one loaded later is not.
  // API records: detaching with them on corrupted the heap within a few
  // detaches in the launch storm on the H200 (CUDA 13.0), kernels alone
  // never (87 detaches); graphs stop it later (OnGraphCall).
  // Unset, CUTRACE_DETACH means "where it can" (config.h).
  const bool wanted = config_.detach_between_windows.value_or(true);
  const bool api_records = config_.kinds.runtime_api || config_.kinds.driver_api;
  const char* why_not = !wanted                         ? "CUTRACE_DETACH=0"
                        : api_records                   ? "API records are on"
                        : counting                      ? "hardware counters are on"
                        : api_->ProgramHasOwnClient()   ? "the program has a CUPTI client of its own"
                        : clock_ != ClockDomain::kMonotonic ? "timestamps are on CUPTI's clock"
                                                            : nullptr;
  if (why_not != nullptr) {
    // Kept from it by the kinds asked for: said once, with the fix; a
    // warning where CUTRACE_DETACH=1 asked for it, else for CUTRACE_LOG=info.
    const bool api = wanted && api_records;
    const bool asked = config_.detach_between_windows.value_or(false);
    Log(api ? (asked ? LogLevel::kWarn : LogLevel::kInfo) : LogLevel::kDebug,
        "continuous mode: CUPTI stays attached between windows (%s)%s", why_not,
        api ? ", which costs every launch between windows too; it detaches without them, e.g. "
              "CUTRACE_KINDS=kernel,memcpy,memset,nvtx,overhead"
            : "");
    return;
  }
  attach_.Enable();
  WatchForGraphs();
}

void Session::WatchForGraphs() {
  // Graphs stop the detaching (OnGraphCall): without their callbacks
  // cutrace could not know, so it does not detach at all.
  if (attach_.enabled() && !EnableGraphCallbacks()) {
    attach_.Disable();
    Log(LogLevel::kDebug, "continuous mode: no graph callbacks: CUPTI stays attached between windows");
  }
}

void Session::OnGraphCall() {
  // Any thread, attached: no more detaching, for the rest of the process.
  if (attach_.Disable()) {
    Log(LogLevel::kDebug, "continuous mode: the program uses CUDA graphs: CUPTI stays attached between "
        "windows from now on");
  }
}

bool Session::DetachBlocked() const {
  // A flush before a module unload runs on a thread of its own, inside
  // CUPTI: never detach under it, nor once one did not come back.
  return unloads_in_flight_.load(std::memory_order_seq_cst) != 0 ||
         unload_flush_stuck_.load(std::memory_order_acquire);
}

void Session::RequestDetach() {
  // Control thread, after the window's flush. Under attach_mu_, so the exit
  // (SettleAttachForExit) either comes first and no detach is asked for, or
  // after, and takes the request back.
  std::lock_guard<std::mutex> lock(attach_mu_);
  if (attach_final_ || !attach_.enabled() || yielded() || DetachBlocked() || !attach_.attached()) {
    return;
  }
  // CUPTI's count of dropped records goes with it: take it now.
  size_t dropped = 0;
  if (api_->ActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped > 0) {
    stats_.AddDroppedByCupti(dropped);
  }
  // cuptiFinalize from the exit of a CUDA API call, where CUPTI advises it:
  // the program's next runtime API call (any thread) detaches; a program
  // that calls only the driver API stays attached. The callbacks go on
  // while still attached (an exit meanwhile finds nothing asked), and only
  // then is the request published: every CUPTI call of this thread comes
  // before it. A program that makes no call until the next window costs
  // nothing meanwhile, and stays attached.
  CUptiResult r = api_->EnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API);
  if (r != CUPTI_SUCCESS) {
    DomainsOff();
    attach_.Disable();
    Log(LogLevel::kInfo, "continuous mode: cannot detach CUPTI between windows (cuptiEnableDomain: %s); "
        "it stays attached with the traced kinds off", api_->ResultString(r).c_str());
    return;
  }
  attach_.Fire(CuptiAttachment::Event::kRequest, attach_actions_);
}

void Session::DomainsOff() {
  static_cast<void>(api_->EnableDomain(0, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API));
  EnableOwnCallbacks();  // the domain switch took cutrace's runtime launch and graph callbacks too
}

void Session::DetachNow() {
  // An application thread, at a runtime API call's exit (SubscriberCallback).
  if (!attach_.Fire(CuptiAttachment::Event::kApiExit, attach_actions_)) return;
  try {
    DetachOrStay();
  } catch (...) {
    // Whatever threw (an allocation in a log line): out of kDetaching, for
    // good (a no-op in any other state).
    attach_.Fire(CuptiAttachment::Event::kAbort, attach_actions_);
    LogRaw("internal error while detaching CUPTI; it stays attached");
  }
}

void Session::DetachOrStay() {
  // Not while another client has the activity API, nor under a module
  // unload's flush (which may never return): both before the flush below.
  if (yielded() || DetachBlocked()) {
    attach_.Fire(CuptiAttachment::Event::kStay, attach_actions_);
    return;
  }
  const uint64_t t0 = MonotonicNs();
  // Every buffer back first, from this thread (CUPTI keeps one per thread
  // that made records): cuptiFinalize must not find one of cutrace's in
  // CUPTI's hands, which it would neither complete nor forget. DEVICE and
  // CONTEXT go off too, so nothing asks for a buffer after the flush.
  DisableKinds(/*all=*/true);
  CUptiResult r = api_->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  const uint64_t t_flush = MonotonicNs();
  const size_t held = pool_->capacity() - pool_->available();
  // A graph since the request (OnGraphCall) turned the detaching off.
  const char* why_not = r != CUPTI_SUCCESS ? "the flush failed"
                        : !attach_.enabled() ? "the program uses CUDA graphs"
                        : held != 0        ? "CUPTI still holds activity buffers after a forced flush"
                        : DetachBlocked()  ? "a module unload's flush is under way"
                                           : nullptr;
  bool tearing_down = false;
  if (why_not == nullptr) {
    attach_.Fire(CuptiAttachment::Event::kTearDown, attach_actions_);
    tearing_down = true;
    r = api_->Finalize();
    if (r != CUPTI_SUCCESS) {
      why_not = "cuptiFinalize failed";
    } else {
      // The subscriber handle is forgotten before kDetached is published
      // (Reattach reads it after).
      attach_.Fire(CuptiAttachment::Event::kTornDown, attach_actions_);
    }
  }
  if (why_not == nullptr) {
    Log(LogLevel::kDebug, "CUPTI detached at %llu ns (monotonic): forced flush %llu us, cuptiFinalize "
        "%llu us; all %zu activity buffers back with cutrace", static_cast<unsigned long long>(t0),
        static_cast<unsigned long long>((t_flush - t0) / 1000),
        static_cast<unsigned long long>((MonotonicNs() - t_flush) / 1000), pool_->capacity());
    return;
  }
  // Still attached, with every kind off until the next window: the domains'
  // callbacks off again, cutrace's own back on. A failed call stops the
  // detaching for good; the others (a buffer held, an unload) may pass by
  // the next window, which asks again.
  const bool for_good = r != CUPTI_SUCCESS;
  attach_.Fire(tearing_down ? CuptiAttachment::Event::kTearDownFailed
               : for_good   ? CuptiAttachment::Event::kGiveUp
                            : CuptiAttachment::Event::kStay,
               attach_actions_);
  Log(for_good ? LogLevel::kInfo : LogLevel::kDebug,
      "continuous mode: CUPTI stays attached %s (%s%s; %zu of %zu activity buffers with CUPTI)",
      for_good ? "between windows with the traced kinds off" : "until the next window", why_not,
      r != CUPTI_SUCCESS ? (": " + api_->ResultString(r)).c_str() : "", held, pool_->capacity());
}

CuptiAttachment::State Session::SettleDetach() {
  // A detach under way on an application thread ends soon (cuptiFinalize):
  // wait for it, boundedly. A request no API exit took yet (no CUDA call
  // since the window closed) is taken back: nothing was detached.
  // The take-back first: waiting first could miss an API exit that takes
  // the request between the two. Nothing asks again meanwhile (the caller
  // holds attach_mu_, which RequestDetach takes).
  if (attach_.Fire(CuptiAttachment::Event::kTakeBack, attach_actions_)) {
    return CuptiAttachment::State::kAttached;
  }
  for (int i = 0; i < 2000 && attach_.busy(); ++i) ::usleep(500);
  return attach_.state();
}

bool Session::Reattach() {
  // Control thread; the caller holds attach_mu_.
  if (attach_final_) return false;
  const CuptiAttachment::State state = SettleDetach();
  if (state == CuptiAttachment::State::kAttached) return true;
  if (state != CuptiAttachment::State::kDetached) {
    Log(LogLevel::kWarn, "continuous mode: CUPTI is still detaching; this window records nothing");
    return false;
  }
  // Everything Start() set up on CUPTI, again: the subscriber (cutrace stays
  // CUPTI's one client), the clock, the settings, the buffer callbacks.
  const uint64_t t0 = MonotonicNs();
  std::string other;
  CUptiResult r = api_->Subscribe(&subscriber_, &Session::SubscriberCallback, nullptr, "cutrace", &other);
  const char* step = "cuptiSubscribe";
  const bool subscribed = r == CUPTI_SUCCESS;
  if (r == CUPTI_SUCCESS) {
    step = "cuptiActivityRegisterTimestampCallback";
    r = api_->ActivityRegisterTimestampCallback(&MonotonicTimestampCallback);
  }
  if (r == CUPTI_SUCCESS) {
    step = "cuptiActivityRegisterCallbacks";
    r = api_->ActivityRegisterCallbacks(&Session::BufferRequested, &Session::BufferCompleted);
  }
  if (r != CUPTI_SUCCESS) {
    // Without its clock or buffers the window would be wrong or lost: no
    // more windows, and no more CUPTI calls (the CUPTI attached now may be
    // another tool's). Not cuptiFinalize, which belongs at an API exit.
    if (subscribed) static_cast<void>(api_->Unsubscribe(subscriber_));
    subscriber_ = nullptr;
    attach_final_ = true;
    attach_.Disable();
    Log(LogLevel::kWarn, "continuous mode: cannot attach CUPTI again for a window (%s: %s%s%s); "
        "no more windows are recorded", step, api_->ResultString(r).c_str(),
        other.empty() ? "" : ", other client: ", other.c_str());
    return false;
  }
  ApplyActivitySettings();  // the thread-id type among them
  // Correlation ids may start again: names kept by id from before would
  // land on the new calls (the launches come after EnableOwnCallbacks).
  launch_names_.Forget();
  EnableOwnCallbacks();
  attach_.Fire(CuptiAttachment::Event::kReattached, attach_actions_);
  Log(LogLevel::kDebug, "CUPTI attached again: %llu us",
      static_cast<unsigned long long>((MonotonicNs() - t0) / 1000));
  return true;
}

bool Session::SettleAttachForExit() {
  std::lock_guard<std::mutex> lock(attach_mu_);
  attach_final_ = true;
  attach_.Disable();
  // Detached, or a detach that did not end in time: no CUPTI call from the
  // exit (one could wait on the cuptiFinalize under way, or attach CUPTI again).
  return SettleDetach() != CuptiAttachment::State::kAttached;
}

}  // namespace cutrace::injection
