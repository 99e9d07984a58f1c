// ClientHandover: handing CUPTI's activity API over to the program's own
// CUPTI client (torch.profiler's Kineto, ...) and taking it back when that
// client is done (client_handover.cc says why and how the program's calls
// are watched). This class is the hand-over's state and order; what it does
// to the session (flush, kinds off and on, callbacks, warnings in the
// trace) goes through Host, which Session implements.
//
// Threads: Yield() and Resume() from any application thread (the program's
// client calls CUPTI from its own threads), serialised by the class's
// mutex; yielded() from any thread, CUPTI's included (lock-free);
// NoteProgramClock() from the thread where the client installs its clock.
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace cutrace::injection {

class ClientHandover {
 public:
  class Host {
   public:
    virtual ~Host() = default;
    // The session is running, in its own process (not a forked child's copy).
    virtual bool HandoverLive() const = 0;
    // cuptiActivityFlushAll(FORCED), while CUPTI still has cutrace's callbacks.
    virtual CUptiResult FlushBeforeHandover() = 0;
    // Every kind cutrace turned on goes off (DEVICE and CONTEXT too).
    virtual void AllKindsOff() = 0;
    // cuptiActivityRegisterCallbacks with cutrace's buffer callbacks.
    virtual CUptiResult RegisterBufferCallbacks() = 0;
    // The kinds on again, unless continuous mode's next window does it.
    virtual void KindsBackOn() = 0;
    // A warning into the trace at `at` (monotonic ns), or when the writer
    // writes it.
    virtual void PostWarning(std::string text, std::optional<uint64_t> at) = 0;
    virtual std::string ResultString(CUptiResult r) const = 0;
    // The clock to put back after the program's client installed its own:
    // cutrace's callback, CUPTI's default where that is CLOCK_REALTIME, or
    // nullptr where neither can be.
    virtual CUpti_TimestampCallbackFunc OwnClock() const = 0;
  };

  // The program's client is registering its buffer callbacks or clock:
  // cutrace's buffers come back, its kinds go off. The first call does it.
  void Yield(Host& host);
  // That client turned kernel records off and flushed: cutrace registers its
  // callbacks (and its clock) again. A no-op unless yielded.
  void Resume(Host& host);
  // The client installed its own timestamp callback (while cutrace yields).
  void NoteProgramClock() { program_clock_.store(true, std::memory_order_release); }
  // The program's client has the activity API.
  bool yielded() const { return yielded_.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> yielded_{false};
  std::mutex mu_;                           // serialises Yield and Resume
  std::atomic<bool> program_clock_{false};  // its timestamp callback is CUPTI's now
};

}  // namespace cutrace::injection
