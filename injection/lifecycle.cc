#include "injection/lifecycle.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>

#include "injection/config.h"
#include "injection/cupti/cupti_loader.h"
#include "injection/log.h"
#include "injection/process_state.h"
#include "injection/session/session.h"

namespace cutrace::injection {
namespace {

// The process-wide state this file keeps is Lifecycle() (process_state.h):
// POD and atomics with no destructor. The Session is leaked for the same
// reason: nothing atexit or a late CUPTI callback reaches is ever destroyed.

// Signal handling: the handler asks the watcher thread to finish the trace
// (a signal handler cannot safely call into CUPTI or take locks) and waits
// on finalize_done with a timeout. SIGINT and SIGTERM always; the crash
// signals after them only with the flight recorder on, whose dump is what a
// crash should leave behind (lifecycle.h).
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr const char* kSignalNames[] = {"SIGINT", "SIGTERM", "SIGSEGV", "SIGBUS",
                                        "SIGFPE", "SIGILL",  "SIGABRT"};
constexpr size_t kSignalCount = sizeof(kSignals) / sizeof(kSignals[0]);
constexpr size_t kFirstCrashSignal = 2;
static_assert(kSignalCount == LifecycleState::kSignalCount);

size_t SignalIndex(int sig) {
  for (size_t i = 0; i < kSignalCount; ++i)
    if (kSignals[i] == sig) return i;
  return 0;
}

const char* SignalReason(int sig) { return kSignalNames[SignalIndex(sig)]; }

// A fault the kernel raised at an instruction (not kill() or raise()): once
// the handler returns with SIG_DFL restored, the instruction runs again and
// the process dies of the fault itself, its core dump at the fault.
bool IsFault(int sig, const siginfo_t* info) {
  return (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL) && info != nullptr &&
         info->si_code > 0;
}

void FinalizeSession(const char* reason) {
  // Only once its Start returned: a forked child's new session may be
  // starting on another thread.
  Session* s = CurrentSession();
  if (s == nullptr || !s->started()) return;
  try {
    s->Finalize(reason);
  } catch (...) {
    LogRaw("internal error while finishing the trace");
  }
}

// Non-zero while OnSignal runs the program's own handler: such a handler
// often calls exit(), and then AtExit runs inside a signal handler, where
// finishing inline could wait forever on a lock the interrupted code holds.

// Hands the shutdown to the watcher thread and waits for it, boundedly.
// Async-signal-safe. Returns false if this process has no watcher.
bool FinalizeViaWatcher(int sig) {
  if (Lifecycle().watcher_pid.load() != ::getpid()) return false;
  // The watcher itself faulted while finishing the trace: no one is left to wait for.
  if (Lifecycle().watcher_tid.load() == static_cast<pid_t>(::syscall(SYS_gettid))) return true;
  if (!Lifecycle().finalize_requested.exchange(true)) {
    Lifecycle().finalize_signal.store(sig);
    sem_post(&Lifecycle().finalize_request);
  }
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  const uint32_t ms = Lifecycle().signal_wait_ms.load();
  deadline.tv_sec += ms / 1000;
  deadline.tv_nsec += static_cast<long>(ms % 1000) * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec += 1;
    deadline.tv_nsec -= 1000000000L;
  }
  while (sem_timedwait(&Lifecycle().finalize_done, &deadline) != 0 && errno == EINTR) {
  }
  sem_post(&Lifecycle().finalize_done);  // let a second waiter through as well
  return true;
}

void AtExit() {
  int sig = Lifecycle().chained_signal.load();
  if (sig != 0 && FinalizeViaWatcher(sig)) return;
  FinalizeSession("exit");
}

void* WatcherMain(void*) {
  Lifecycle().watcher_tid.store(static_cast<pid_t>(::syscall(SYS_gettid)));
  for (;;) {
    while (sem_wait(&Lifecycle().finalize_request) != 0 && errno == EINTR) {
    }
    FinalizeSession(SignalReason(Lifecycle().finalize_signal.load()));
    sem_post(&Lifecycle().finalize_done);
  }
  return nullptr;
}

// Starts the watcher thread with SIGINT/SIGTERM blocked, so it never runs
// the handler itself (it would wait for itself).
bool StartWatcher() {
  if (sem_init(&Lifecycle().finalize_request, 0, 0) != 0 || sem_init(&Lifecycle().finalize_done, 0, 0) != 0) return false;
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  pthread_t thread;
  bool ok = pthread_create(&thread, &attr, &WatcherMain, nullptr) == 0;
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (ok) {
    pthread_setname_np(thread, "cutrace-signal");
    Lifecycle().watcher_pid.store(::getpid());
  }
  return ok;
}

bool IsProgramHandler(const struct sigaction& a) {
  if (a.sa_flags & SA_SIGINFO) return a.sa_sigaction != nullptr;
  return a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN;
}

// Async-signal-safe throughout: atomics, sem_post/sem_timedwait, sigaction, raise.
void OnSignal(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const struct sigaction& old = Lifecycle().old_actions[SignalIndex(sig)];
  if (IsProgramHandler(old)) {
    // The program decides what the signal means; if it exits, atexit finishes the trace.
    int outer = Lifecycle().chained_signal.exchange(sig);
    if (old.sa_flags & SA_SIGINFO) {
      old.sa_sigaction(sig, info, context);
    } else {
      old.sa_handler(sig);
    }
    Lifecycle().chained_signal.store(outer);
    errno = saved_errno;
    return;
  }
  if (old.sa_handler == SIG_IGN) {
    errno = saved_errno;
    return;
  }
  // SIG_DFL: the process is about to die. Finish the trace first, if this
  // process has a watcher (a forked child that never traced has none).
  FinalizeViaWatcher(sig);
  // Die of the signal, as the program would have without cutrace.
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  if (IsFault(sig, info)) {
    errno = saved_errno;
    return;  // the faulting instruction again, now under SIG_DFL
  }
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, sig);
  raise(sig);
  pthread_sigmask(SIG_UNBLOCK, &unblock, nullptr);
  errno = saved_errno;
}

void InstallSignalHandlers(bool crash_signals) {
  if (Lifecycle().handlers_installed.exchange(true)) return;
  for (size_t i = 0; i < kSignalCount; ++i) {
    const int sig = kSignals[i];
    if (i >= kFirstCrashSignal && !crash_signals) break;
    struct sigaction current;
    if (sigaction(sig, nullptr, &current) != 0) continue;
    // Ignored signals stay ignored (e.g. SIGINT of a background job).
    if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN) continue;
    Lifecycle().old_actions[SignalIndex(sig)] = current;
    struct sigaction action;
    std::memset(&action, 0, sizeof(action));
    action.sa_sigaction = &OnSignal;
    action.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaddset(&action.sa_mask, SIGINT);
    sigaddset(&action.sa_mask, SIGTERM);
    if (sigaction(sig, &action, nullptr) != 0) {
      Log(LogLevel::kDebug, "cannot install the %s handler: %s", SignalReason(sig), std::strerror(errno));
    }
  }
}

void ChildAfterFork() {
  // The child inherits the parent's session, writer object and file
  // descriptor, but not its threads: it must never touch them. Session
  // checks the pid on every path; here only the signal bookkeeping resets
  // (the child has no watcher until it starts its own session).
  Lifecycle().finalize_requested.store(false);
}

// NVTX ranges reach CUPTI through NVTX_INJECTION64_PATH, read at the
// program's first NVTX call. `cutrace run` (or the LD_PRELOAD constructor)
// named the libcupti the search finds; if cutrace joined the program's own
// copy instead (cupti_loader.h), NVTX must follow, or it would start a
// second CUPTI. A path the user chose is left alone.
void PointNvtxAt(const std::string& loaded) {
  const char* nvtx = ::getenv("NVTX_INJECTION64_PATH");
  if (nvtx == nullptr || nvtx[0] == '\0' || loaded.empty()) return;
  auto override_path = GetProcessEnv("CUTRACE_CUPTI_PATH");
  auto searched = FindCuptiLibrary(override_path ? *override_path : "");
  char a[PATH_MAX], b[PATH_MAX], c[PATH_MAX];
  if (!searched || ::realpath(nvtx, a) == nullptr || ::realpath(searched->c_str(), b) == nullptr ||
      ::realpath(loaded.c_str(), c) == nullptr)
    return;
  if (std::strcmp(a, b) == 0 && std::strcmp(b, c) != 0) {
    ::setenv("NVTX_INJECTION64_PATH", c, 1);
    Log(LogLevel::kDebug, "NVTX_INJECTION64_PATH now %s (the program's libcupti)", c);
  }
}

}  // namespace

int InitializeFromDriver() {
  try {
    const pid_t pid = ::getpid();
    pid_t previous = Lifecycle().init_pid.load();
    if (previous == pid || !Lifecycle().init_pid.compare_exchange_strong(previous, pid)) return 1;

    Config config = ParseConfig(&GetProcessEnv);
    SetLogLevel(config.log_level);
    for (const std::string& problem : config.problems) Log(LogLevel::kWarn, "%s", problem.c_str());
    if (config.disabled) {
      Log(LogLevel::kDebug, "CUTRACE_DISABLE is set: not tracing");
      return 1;
    }
    Lifecycle().signal_wait_ms.store(config.flush_timeout_ms + 2000);

    std::string cupti_path;
    auto api = LoadCupti(config.cupti_path, &cupti_path);
    if (!api.ok()) {
      Log(LogLevel::kWarn, "%s; the program runs untraced", api.status().message().c_str());
      return 1;
    }
    Log(LogLevel::kDebug, "loaded %s", cupti_path.c_str());
    PointNvtxAt(cupti_path);
    // Leaked on purpose once started: CUPTI may call back at any time. A
    // session that failed to start is unreachable from CUPTI's callbacks
    // (Session::Active() is not it), so it can go.
    auto* session = new Session(std::move(config), &GetProcessEnv);
    Status started = session->Start(std::move(api).value());
    if (!started.ok()) {
      Log(LogLevel::kWarn, "%s", started.message().c_str());
      delete session;
      return 1;
    }
    if (!Lifecycle().atexit_registered.exchange(true) && std::atexit(&AtExit) != 0) {
      Log(LogLevel::kWarn, "cannot register the exit handler: the trace will lack its end marker");
    }
    if (!Lifecycle().atfork_registered.exchange(true)) pthread_atfork(nullptr, nullptr, &ChildAfterFork);
    if (Lifecycle().watcher_pid.load() != pid && !StartWatcher()) {
      Log(LogLevel::kWarn, "cannot start the signal watcher: SIGINT/SIGTERM will cut the trace short");
    } else {
      InstallSignalHandlers(session->has_flight_recorder());
    }
  } catch (...) {
    LogRaw("internal error during start-up; the program runs untraced");
  }
  return 1;
}

void OnLibraryLoad() {
  try {
    if (auto disabled = GetProcessEnv("CUTRACE_DISABLE"); disabled && ParseBool(*disabled) == true) return;
    if (auto level = GetProcessEnv("CUTRACE_LOG")) {
      if (auto parsed = ParseLogLevel(*level)) SetLogLevel(*parsed);
    }
    Dl_info info;
    char self[PATH_MAX];
    if (::dladdr(reinterpret_cast<void*>(&OnLibraryLoad), &info) == 0 || info.dli_fname == nullptr ||
        ::realpath(info.dli_fname, self) == nullptr) {
      Log(LogLevel::kDebug, "cannot find this library's own path");
      return;
    }
    const char* injection = ::getenv("CUDA_INJECTION64_PATH");
    if (injection == nullptr || injection[0] == '\0') {
      ::setenv("CUDA_INJECTION64_PATH", self, 1);
    } else {
      char resolved[PATH_MAX];
      if (::realpath(injection, resolved) == nullptr || std::strcmp(resolved, self) != 0) {
        Log(LogLevel::kWarn, "CUDA_INJECTION64_PATH names another library (%s): not tracing", injection);
        return;
      }
    }
    if (const char* nvtx = ::getenv("NVTX_INJECTION64_PATH"); nvtx == nullptr || nvtx[0] == '\0') {
      auto override_path = GetProcessEnv("CUTRACE_CUPTI_PATH");
      if (auto cupti = FindCuptiLibrary(override_path ? *override_path : "")) {
        ::setenv("NVTX_INJECTION64_PATH", cupti->c_str(), 1);
      } else {
        Log(LogLevel::kDebug, "libcupti not found: NVTX ranges will not be recorded");
      }
    }
  } catch (...) {
    LogRaw("internal error while loading; the program runs untraced");
  }
}

}  // namespace cutrace::injection
