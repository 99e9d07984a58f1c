// Process-wide state of the injected library, in one place. Everything here
// outlives every object: plain atomics and POD, constant-initialised, with
// no destructors, so the LD_PRELOAD constructor, atexit ordering, signal
// handlers and late CUPTI callbacks never meet an object that is not built
// yet or already destroyed. Each variable says who writes it and from which
// context: the starting thread (InitializeInjection at cuInit), CUPTI's
// threads (buffer and subscriber callbacks), the control thread, the signal
// watcher thread, a signal handler, or any application thread.
//
// Only this file defines process-wide variables; everything else is per
// session or per object (thread_local launch state of the range profiler
// is per thread and stays with it). Each group below is used by the one
// file its comment names, and by no other: the groups are gathered here to
// be seen together, not to be shared.
#pragma once

#include <semaphore.h>
#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <mutex>

namespace cutrace::injection {

class Session;
class RangeProfiler;

// ---- The current session (session/session.cc, lifecycle.cc).
// The one CUPTI's buffer and subscriber callbacks reach (they carry no user
// data) and the one the process's end finishes. Written by Session::Start
// on the starting thread (published once its writer runs, before CUPTI's
// buffer callbacks are registered; withdrawn if Start fails later) and by
// ~Session (tests only: production leaks its session). Read from any
// thread, CUPTI's and the signal watcher included. A forked child keeps the
// parent's until it starts its own; Session checks the pid.
Session* CurrentSession();
void PublishSession(Session* session);
// Clears the current session if it is `session`.
void WithdrawSession(Session* session);

// ---- One-line warnings said once per process (LogOnce), whichever
// session, thread or path meets the problem first.
struct OnceSaid {
  // session/activity_intake.cc (CUPTI's threads) and Session::Finalize (any thread).
  std::atomic<bool> pool_empty{false};     // every activity buffer was out
  std::atomic<bool> cupti_dropped{false};  // CUPTI reported dropped records
  std::atomic<bool> queue_full{false};     // the writer queue refused a batch
  // activity_processor.cc (CUPTI's threads).
  std::atomic<bool> bad_record{false};    // a record was rejected as impossible
  std::atomic<bool> first_marker{false};  // the first NVTX marker's kind (debug)
  // session/client_handover.cc (the application thread of the program's client).
  std::atomic<bool> client_started{false};  // the program started a CUPTI client
  // production/production_controller.cc (the writer thread).
  std::atomic<bool> openmetrics_failed{false};  // CUTRACE_OPENMETRICS_FILE could not be written
};
OnceSaid& Said();

// ---- The log level (log.cc). Written by the LD_PRELOAD constructor and
// the starting thread (CUTRACE_LOG); read by every thread that logs.
std::atomic<int>& LogLevelState();

// ---- The process's life (lifecycle.cc).
struct LifecycleState {
  static constexpr size_t kSignalCount = 7;  // lifecycle.cc's kSignals
  // The pid InitializeInjection last ran in (the starting thread): once per
  // process, again in a forked child.
  std::atomic<pid_t> init_pid{0};
  // atexit and pthread_atfork handlers registered (starting thread; once).
  std::atomic<bool> atexit_registered{false};
  std::atomic<bool> atfork_registered{false};
  // The dispositions cutrace's handlers replaced: written by the starting
  // thread before the handlers go in, read by the handlers (signal context).
  struct sigaction old_actions[kSignalCount] = {};
  std::atomic<bool> handlers_installed{false};  // starting thread; once
  // The handler (signal context) posts finalize_request; the watcher
  // thread finishes the trace and posts finalize_done. Initialised by the
  // starting thread before the watcher starts.
  sem_t finalize_request = {};
  sem_t finalize_done = {};
  // The process whose watcher thread runs, and that thread's tid (the
  // starting thread, and the watcher itself); read in signal context.
  std::atomic<pid_t> watcher_pid{0};
  std::atomic<pid_t> watcher_tid{0};
  // The signal that asked for the finish (signal context; read by the
  // watcher), and whether one asked already (reset in a forked child).
  std::atomic<int> finalize_signal{0};
  std::atomic<bool> finalize_requested{false};
  // How long a handler waits for the watcher: CUTRACE_FLUSH_TIMEOUT_MS + 2 s
  // (starting thread; read in signal context).
  std::atomic<uint32_t> signal_wait_ms{7000};
  // Non-zero while a handler runs the program's own handler for this
  // signal (signal context), read by AtExit (the exiting thread).
  std::atomic<int> chained_signal{0};
};
LifecycleState& Lifecycle();

// ---- The production control channel (production/control_channel.cc).
struct ControlSignalState {
  // Trigger and capture signals received: added by the handler (signal
  // context), taken by the control thread.
  std::atomic<int> dump_requests{0};
  std::atomic<int> capture_requests{0};
  // Which signal is which: written by the starting thread when the
  // handlers go in, read by the handler.
  std::atomic<int> trigger_signal{0};
  std::atomic<int> capture_signal{0};
  // exit()'s status (on_exit, on the exiting thread), read by the
  // controller's Stop (the same thread, from the session's atexit).
  std::atomic<int> exit_status{0};
  std::atomic<bool> exit_seen{false};
};
ControlSignalState& ControlSignals();

// ---- The program's own CUPTI client (session/client_handover.cc).
struct HandoverState {
  static constexpr size_t kWatchedCount = 5;  // client_handover.cc's Watched
  // libcupti's functions behind cutrace's wrappers of the program's calls:
  // written once by the starting thread (under `once`) before any GOT slot
  // points at a wrapper, read by the wrappers on any application thread.
  std::atomic<void*> real[kWatchedCount] = {};
  std::once_flag once;  // GOT slots are the process's, not a session's
  // The program's client has kernel records on: written and read by the
  // wrappers, on the application threads that call its CUPTI functions.
  std::atomic<bool> client_kernels{false};
};
HandoverState& Handover();

// ---- The hardware counters' profiler (range_profiler.cc). Set by
// StartCounters on the starting thread (and cleared if it fails), read by
// the subscriber callback on application threads and by FinishCounters at
// the process's end.
std::atomic<RangeProfiler*>& CurrentProfiler();

// ---- Capture ranges (production/capture_control.cc writes it, the counters
// of range_profiler.cc read it): kCaptureNone when no capture range is
// configured, else whether a range is open now. Written by the thread that
// opens or closes a range (a program thread, or the control thread) under
// the controller's capture lock; read at every counted launch or NVTX push.
enum CaptureGateState : int { kCaptureNone = -1, kCaptureClosed = 0, kCaptureOpen = 1 };
std::atomic<int>& CaptureGate();

}  // namespace cutrace::injection
