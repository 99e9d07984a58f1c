// CuptiAttachment (cupti_attachment.h): the transition table and Fire().
#include "injection/session/cupti_attachment.h"

namespace cutrace::injection {
namespace {

using State = CuptiAttachment::State;
using Event = CuptiAttachment::Event;
using Transition = CuptiAttachment::Transition;

constexpr Transition To(State to, uint8_t actions = CuptiAttachment::kNone) { return {true, to, actions}; }

// Events that come from a state only the detaching thread leaves: their
// actions run before the new state is published.
constexpr bool OwnedByDetachingThread(State from) {
  return from == State::kDetaching || from == State::kTearingDown;
}

}  // namespace

Transition CuptiAttachment::Step(State from, Event event) {
  switch (from) {
    case State::kAttached:
      if (event == Event::kRequest) return To(State::kDetachPending);
      break;
    case State::kDetachPending:
      if (event == Event::kApiExit) return To(State::kDetaching);
      // Nothing was detached: the callbacks that waited for an API exit go off.
      if (event == Event::kTakeBack) return To(State::kAttached, kCallbacksOff);
      break;
    case State::kDetaching:
      if (event == Event::kStay) return To(State::kAttached, kCallbacksOff);
      if (event == Event::kGiveUp) return To(State::kAttached, kCallbacksOff | kStopDetaching);
      // Whatever threw, the state must not stay "detaching": every later
      // window and the exit would wait on it. Nothing else is trusted then.
      if (event == Event::kAbort) return To(State::kAttached, kStopDetaching);
      if (event == Event::kTearDown) return To(State::kTearingDown);
      break;
    case State::kTearingDown:
      if (event == Event::kTornDown) return To(State::kDetached, kForgetSubscriber | kCountDetach);
      if (event == Event::kTearDownFailed) return To(State::kAttached, kCallbacksOff | kStopDetaching);
      break;
    case State::kDetached:
      if (event == Event::kReattached) return To(State::kAttached);
      break;
  }
  return {};
}

bool CuptiAttachment::Fire(Event event, Actions& actions) {
  State from = state_.load(std::memory_order_seq_cst);
  const Transition t = Step(from, event);
  if (!t.applies) return false;
  auto act = [&] {
    if (t.actions & kCallbacksOff) actions.CallbacksOff();
    if (t.actions & kStopDetaching) enabled_.store(false, std::memory_order_release);
    if (t.actions & kForgetSubscriber) actions.ForgetSubscriber();
    if (t.actions & kCountDetach) detaches_.fetch_add(1, std::memory_order_relaxed);
  };
  if (OwnedByDetachingThread(from)) {
    act();
    state_.store(t.to, std::memory_order_seq_cst);
    return true;
  }
  // kDetachPending is raced for by an API exit and a take-back; kAttached
  // and kDetached are left only by the control thread under the session's
  // attach mutex, where the swap cannot fail but costs nothing.
  if (!state_.compare_exchange_strong(from, t.to, std::memory_order_seq_cst)) return false;
  act();
  return true;
}

const char* AttachStateName(CuptiAttachment::State state) {
  switch (state) {
    case State::kAttached: return "attached";
    case State::kDetachPending: return "detach-pending";
    case State::kDetaching: return "detaching";
    case State::kTearingDown: return "tearing-down";
    case State::kDetached: return "detached";
  }
  return "?";
}

const char* AttachEventName(CuptiAttachment::Event event) {
  switch (event) {
    case Event::kRequest: return "request";
    case Event::kApiExit: return "api-exit";
    case Event::kTakeBack: return "take-back";
    case Event::kStay: return "stay";
    case Event::kGiveUp: return "give-up";
    case Event::kAbort: return "abort";
    case Event::kTearDown: return "tear-down";
    case Event::kTornDown: return "torn-down";
    case Event::kTearDownFailed: return "tear-down-failed";
    case Event::kReattached: return "reattached";
  }
  return "?";
}

}  // namespace cutrace::injection
