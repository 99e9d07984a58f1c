// CuptiAttachment: whether CUPTI is attached to the process, as continuous
// mode detaches it between windows (CUTRACE_DETACH) and attaches it again
// for the next window. Kinds once enabled on a live context keep costing
// every launch after they are disabled (~1.3 us on the H200, CUDA 13.0), so
// between windows CUPTI detaches: cuptiFinalize, at the exit of the
// program's next runtime API call, as CUPTI advises.
//
// The states, in this order (the order matters: from kDetaching on, CUPTI
// gets no buffer from cutrace):
//   kAttached      CUPTI serves cutrace; the only state outside continuous mode.
//   kDetachPending the control thread asked, after a window's flush, for a
//                  detach at the next runtime API exit (its callbacks are on).
//   kDetaching     an application thread took the request at an API exit and
//                  makes the forced flush (buffers coming back are still read).
//   kTearingDown   that thread is inside cuptiFinalize: a buffer that comes
//                  back now, or later, is dropped unread (reading it would
//                  attach CUPTI again on that thread).
//   kDetached      cuptiFinalize returned; the next window attaches again.
//
// Every change of state is an Event, and Step() is the whole table: the
// state after an event and the actions it asks for. An event the table does
// not list for a state changes nothing and asks for nothing.
//
// Threads: kRequest and kReattached come from the control thread (the
// session's attach mutex held); kApiExit from any application thread;
// kTakeBack from the control thread or the exit. These two race on
// kDetachPending and are decided by one compare-and-swap: the winner acts
// after it won. kStay, kAbort, kTearDown, kTornDown and kTearDownFailed come
// only from the thread that won kApiExit, which owns kDetaching and
// kTearingDown: it acts first and publishes the state after, so that nobody
// sees kAttached before its callbacks are back in order. The queries may be
// called from any thread, CUPTI's buffer callbacks included (lock-free).
#pragma once

#include <atomic>
#include <cstdint>

namespace cutrace::injection {

class CuptiAttachment {
 public:
  enum class State : uint8_t { kAttached, kDetachPending, kDetaching, kTearingDown, kDetached };
  enum class Event : uint8_t {
    kRequest,          // control thread: detach at the next runtime API exit
    kApiExit,          // an application thread's runtime API exit takes the request
    kTakeBack,         // a request no API exit took yet is withdrawn (next window, exit)
    kStay,             // the detaching thread cannot detach now (a buffer held, an unload, ...)
    kGiveUp,           // ... and never will: its forced flush failed
    kAbort,            // ... something threw while detaching
    kTearDown,         // everything is back: cuptiFinalize is called
    kTornDown,         // cuptiFinalize returned success
    kTearDownFailed,   // cuptiFinalize failed
    kReattached,       // the control thread subscribed and registered everything again
  };
  static constexpr int kStateCount = 5;
  static constexpr int kEventCount = 10;

  // Actions a transition asks for, as bits. kCallbacksOff and
  // kForgetSubscriber are the owner's to carry out (Actions below);
  // kStopDetaching and kCountDetach this class does itself.
  enum Action : uint8_t {
    kNone = 0,
    kCallbacksOff = 1 << 0,      // the runtime API domain's callbacks off, cutrace's own back on
    kStopDetaching = 1 << 1,     // no more detaching for the rest of the process
    kCountDetach = 1 << 2,       // one more detach in the statistics
    kForgetSubscriber = 1 << 3,  // cuptiFinalize took the subscriber handle with it
  };
  struct Transition {
    bool applies = false;  // false: the event changes nothing in this state
    State to = State::kAttached;
    uint8_t actions = kNone;
  };
  // The table. Pure: the unit test walks every (state, event) pair.
  static Transition Step(State from, Event event);

  // What the owner does for kCallbacksOff and kForgetSubscriber (the
  // Session's CUPTI calls).
  class Actions {
   public:
    virtual ~Actions() = default;
    virtual void CallbacksOff() = 0;
    virtual void ForgetSubscriber() = 0;
  };

  CuptiAttachment() = default;
  explicit CuptiAttachment(State initial) : state_(initial) {}  // tests
  CuptiAttachment(const CuptiAttachment&) = delete;
  CuptiAttachment& operator=(const CuptiAttachment&) = delete;

  // Applies `event` if the table lists it for the current state: true then.
  // Its actions run before the new state is published where the detaching
  // thread owns the state, after the compare-and-swap where threads race for
  // it (see the header comment).
  bool Fire(Event event, Actions& actions);

  State state() const { return state_.load(std::memory_order_seq_cst); }
  bool attached() const { return state() == State::kAttached; }
  bool detach_pending() const { return state() == State::kDetachPending; }
  // A detach under way (flush or cuptiFinalize): the exit and the next window wait.
  bool busy() const {
    const State s = state();
    return s == State::kDetaching || s == State::kTearingDown;
  }
  // CUPTI may be handed a buffer: not from kDetaching on (every kind is off).
  bool hands_out_buffers() const { return state() < State::kDetaching; }

  // Detaching between windows is on (continuous mode, where it can work).
  bool enabled() const { return enabled_.load(std::memory_order_acquire); }
  // Relaxed: SubscriberCallback's cheap first test on every call.
  bool enabled_relaxed() const { return enabled_.load(std::memory_order_relaxed); }
  void Enable() { enabled_.store(true, std::memory_order_release); }
  // Off for good; true if it was on.
  bool Disable() { return enabled_.exchange(false, std::memory_order_acq_rel); }

  uint64_t detaches() const { return detaches_.load(std::memory_order_relaxed); }
  // A buffer came back while tearing down or detached; true for the first.
  bool CountDroppedBuffer() { return buffers_dropped_.fetch_add(1, std::memory_order_relaxed) == 0; }
  uint64_t buffers_dropped() const { return buffers_dropped_.load(std::memory_order_relaxed); }

 private:
  std::atomic<State> state_{State::kAttached};
  std::atomic<bool> enabled_{false};
  std::atomic<uint64_t> detaches_{0};
  std::atomic<uint64_t> buffers_dropped_{0};
};

const char* AttachStateName(CuptiAttachment::State state);
const char* AttachEventName(CuptiAttachment::Event event);

}  // namespace cutrace::injection
