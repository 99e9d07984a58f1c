// A stand-in CUDA program for the lifecycle tests: it does what the CUDA
// driver does at cuInit (dlopen CUDA_INJECTION64_PATH, call
// InitializeInjection), "launches" kernels through the fake libcupti named by
// CUTRACE_CUPTI_PATH, prints a line, and then ends the way argv[1] says:
//   return          return 0 from main
//   exit-thread     exit(7) from a second thread while main sleeps
//   sigterm         raise(SIGTERM) with the default disposition (dies of it)
//   sigint-handler  its own SIGINT handler, installed before cuInit; then return 0
//   exit-in-handler its own SIGTERM handler, which calls exit(3)
//   kill            raise(SIGKILL): no handler runs, the trace is cut short
//   abort           abort(): SIGABRT; the trace is cut short unless the flight
//                   recorder is on (then it is finished and the ring dumped)
//   segv            a store to a PROT_NONE page: SIGSEGV from the kernel, the
//                   same two outcomes
//   sigterm-ignored SIGTERM ignored before cuInit; raise it; then return 0
//   fork            fork(); the child prints and exit(0)s; the parent waits, returns 0
//   other-client    a CUPTI client of the program's own (OTHER_CLIENT_PATH, loaded
//                   before cuInit as a framework's is) starts after the first
//                   kernels; 4 more kernels are its; it stops; 2 more are
//                   cutrace's again; prints what it saw; returns 0
#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

volatile sig_atomic_t g_handled = 0;
void OnSigint(int) { g_handled = 1; }
void ExitOnSigterm(int) { std::exit(3); }

// The library named by `env`, or nullptr if it is unset or does not load.
void* Open(const char* env) {
  const char* path = std::getenv(env);
  return path == nullptr ? nullptr : dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "return";
  if (std::strcmp(mode, "sigint-handler") == 0) signal(SIGINT, &OnSigint);
  if (std::strcmp(mode, "sigterm-ignored") == 0) signal(SIGTERM, SIG_IGN);
  if (std::strcmp(mode, "exit-in-handler") == 0) signal(SIGTERM, &ExitOnSigterm);

  // A framework's profiler is loaded with the program, long before cuInit.
  void* other = nullptr;
  if (std::strcmp(mode, "other-client") == 0 && (other = Open("OTHER_CLIENT_PATH")) == nullptr) return 99;

  // What the driver does at cuInit.
  void* injection = Open("CUDA_INJECTION64_PATH");
  if (injection == nullptr) return 91;
  auto init = reinterpret_cast<int (*)()>(dlsym(injection, "InitializeInjection"));
  if (init == nullptr) return 92;
  init();
  init();  // a second call must be harmless

  // Without the fake libcupti (a test of a missing CUPTI) there is no GPU work.
  if (void* cupti = Open("CUTRACE_CUPTI_PATH")) {
    auto launch = reinterpret_cast<void (*)(const char*, int)>(dlsym(cupti, "fake_cupti_launch"));
    auto deliver = reinterpret_cast<void (*)()>(dlsym(cupti, "fake_cupti_deliver"));
    if (launch == nullptr || deliver == nullptr) return 93;
    launch("_Z6kernelv", 5);
    deliver();
    launch("_Z5otherv", 3);  // still with "CUPTI" at exit: needs the final flush
    if (other != nullptr) {
      // The profiler starts: the 3 kernels above are cutrace's, the next 4 its own.
      auto start = reinterpret_cast<int (*)()>(dlsym(other, "other_client_start"));
      auto kernels = reinterpret_cast<int (*)()>(dlsym(other, "other_client_kernels"));
      auto unknown = reinterpret_cast<int (*)()>(dlsym(other, "other_client_unknown_buffers"));
      auto stop = reinterpret_cast<int (*)()>(dlsym(other, "other_client_stop"));
      if (start == nullptr || kernels == nullptr || unknown == nullptr || stop == nullptr) return 100;
      if (start() != 0) return 101;
      launch("_Z7profiledv", 4);
      deliver();
      if (stop() != 0) return 102;
      launch("_Z5afterv", 2);  // cutrace's again: delivered at its final flush
      std::printf("other client saw %d kernels, %d unknown buffers\n", kernels(), unknown());
    }
  }

  std::printf("app output %s\n", mode);
  std::fflush(stdout);

  if (std::strcmp(mode, "exit-thread") == 0) {
    std::thread([] { std::exit(7); }).detach();
    sleep(30);
    return 94;
  }
  if (std::strcmp(mode, "sigterm") == 0) {
    raise(SIGTERM);
    sleep(30);
    return 95;
  }
  if (std::strcmp(mode, "kill") == 0) raise(SIGKILL);
  if (std::strcmp(mode, "abort") == 0) std::abort();
  if (std::strcmp(mode, "segv") == 0) {
    // A store to a page mapped without access: SIGSEGV from the kernel at this
    // instruction (and no undefined behaviour for UBSan to stop at first).
    void* page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return 92;
    *static_cast<volatile int*>(page) = 1;
    return 93;
  }
  if (std::strcmp(mode, "exit-in-handler") == 0) {
    raise(SIGTERM);
    sleep(30);
    return 98;
  }
  if (std::strcmp(mode, "sigint-handler") == 0) {
    raise(SIGINT);
    std::printf("handled %d\n", static_cast<int>(g_handled));
    return g_handled ? 0 : 96;
  }
  if (std::strcmp(mode, "sigterm-ignored") == 0) {
    raise(SIGTERM);
    std::printf("still here\n");
    return 0;
  }
  if (std::strcmp(mode, "fork") == 0) {
    std::fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
      std::printf("child\n");
      std::exit(0);  // runs the inherited atexit handlers: must not hang or write
    }
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 97;
  }
  return 0;
}
