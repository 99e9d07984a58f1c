// exit_thread: launches kernels, then a second thread calls exit(STATUS)
// while main is blocked joining it. The tracer's exit path then runs on a
// thread that is not main, with main still alive.
#include <thread>

#include "testapps/common/testapp.h"

__global__ void exit_kernel(int* data, int n) {
  ct::ForElement(n, [=](int i) { data[i] = n - i; });
}

int main(int argc, char** argv) {
  ct::Args args(argc, argv, "exit_thread", "exit() called from a non-main thread");
  const long kernels = args.Int("kernels", 100, "kernels before exiting");
  const long status = args.Int("status", 0, "exit status passed to exit()");
  const std::string truth_path = args.Finish({"exit_kernel(int*, int)"});

  ct::LaunchOverInts(kernels, exit_kernel, 1024);

  ct::Truth truth("exit_thread");
  truth.Kernels("exit_kernel(int*, int)", kernels);
  truth["exit_status"] = status;
  truth.Write(truth_path);
  ct::Say("exit_thread: %ld kernels, exiting with %ld from a thread\n", kernels, status);

  std::thread exiter([status] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::exit(static_cast<int>(status));
  });
  exiter.join();  // never returns: exit() ends the process first
  std::fprintf(stderr, "exit_thread: exit() from the thread returned\n");
  return 99;
}
