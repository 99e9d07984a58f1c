// The injected library's process-level life: start-up from the CUDA driver
// (InitializeInjection), the LD_PRELOAD constructor, and every way a process
// ends — return from main or exit() from any thread (atexit), SIGINT and
// SIGTERM (chained to the program's handlers), a crash (SIGSEGV, SIGBUS,
// SIGFPE, SIGILL, SIGABRT) when the flight recorder is on, and fork.
//
//  - OnLibraryLoad (constructor): under LD_PRELOAD, points
//    CUDA_INJECTION64_PATH at this library (if unset), so CUPTI starts only
//    if the program calls cuInit, and NVTX_INJECTION64_PATH at the libcupti
//    cutrace will load (if unset), so NVTX ranges reach CUPTI.
//  - InitializeFromDriver (InitializeInjection, at cuInit): once per process
//    (a forked child that calls cuInit again gets its own session and file).
//    Every failure is one stderr line; the program always continues.
//  - Signals: if the program's previous disposition was SIG_DFL, the trace is
//    finished (by a watcher thread, bounded by CUTRACE_FLUSH_TIMEOUT_MS + 2 s)
//    and the signal re-raised with SIG_DFL, so the exit status stays a
//    death by that signal; a program handler is simply called; SIG_IGN is
//    left alone. The crash signals get the same treatment only with
//    CUTRACE_FLIGHT_RECORDER set: finishing the trace then dumps the ring
//    (reason "flight-recorder:SIGSEGV", ...). A fault the kernel raised is
//    not re-raised: with SIG_DFL back, the faulting instruction runs again
//    and the process dies of it, core dump and exit status as without
//    cutrace. Without the flight recorder a crash cuts the trace short, as
//    it always did: a crashing process is no place to call into CUPTI
//    unasked, even boundedly.
//
// Threads: the entry points may be called from any thread; the state they
// share is atomics and the leaked Session.
#pragma once

namespace cutrace::injection {

int InitializeFromDriver();
void OnLibraryLoad();

}  // namespace cutrace::injection
