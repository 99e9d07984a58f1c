// Process-wide state of the injected library, in one place. Everything here
// outlives every object (plain atomics and POD: no destructors, so atexit
// ordering and late CUPTI callbacks never meet a destroyed object), and
// each variable says who writes it and from which context: the starting
// thread (InitializeInjection at cuInit), CUPTI's threads (buffer and
// subscriber callbacks), the control thread, the signal watcher, signal
// handlers, or any application thread.
//
// Only this file defines process-wide variables; other files hold
// per-session or per-object state.
#pragma once

#include <atomic>

namespace cutrace::injection {

class Session;

// The current session: the one CUPTI's buffer and subscriber callbacks
// reach (they carry no user data) and the one the process's end finishes.
// Written by Session::Start on the starting thread (published once its
// writer runs, before CUPTI's buffer callbacks are registered; withdrawn
// if Start fails later) and by ~Session (tests only: production leaks its
// session). Read from any thread and from the signal watcher. A forked
// child keeps the parent's until it starts its own; Session checks the pid.
Session* CurrentSession();
void PublishSession(Session* session);
// Clears the current session if it is `session`.
void WithdrawSession(Session* session);

// One-line warnings said once per process (LogOnce), whichever session or
// path meets the problem first. Set from CUPTI's threads (the buffer
// callbacks) and from Session::Finalize (any thread).
struct IntakeWarnings {
  std::atomic<bool> pool_empty{false};     // every activity buffer was out
  std::atomic<bool> cupti_dropped{false};  // CUPTI reported dropped records
  std::atomic<bool> queue_full{false};     // the writer queue refused a batch
};
IntakeWarnings& IntakeWarningsSaid();

}  // namespace cutrace::injection
