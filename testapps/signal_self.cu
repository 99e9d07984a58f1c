// signal_self: launches kernels, then raises SIGTERM or SIGINT on itself with
// the default disposition. The process dies of the signal (status 128 + N);
// the trace must still be complete.
#include <signal.h>

#include "testapps/common/testapp.h"

__global__ void signal_kernel(int* data, int n) {
  ct::ForElement(n, [=](int i) { data[i] = i * i; });
}

int main(int argc, char** argv) {
  ct::Args args(argc, argv, "signal_self", "raises SIGTERM or SIGINT on itself after kernels");
  const long kernels = args.Int("kernels", 100, "kernels before the signal");
  const std::string sig_name = args.Str("signal", "TERM", "TERM or INT");
  const std::string truth_path = args.Finish({"signal_kernel(int*, int)"});
  int sig = 0;
  if (sig_name == "TERM") sig = SIGTERM;
  else if (sig_name == "INT") sig = SIGINT;
  else ct::Fail("--signal is TERM or INT");

  ct::LaunchOverInts(kernels, signal_kernel, 1024);

  ct::Truth truth("signal_self");
  truth.Kernels("signal_kernel(int*, int)", kernels);
  truth.DiesOf(sig);
  truth.Write(truth_path);
  ct::Say("signal_self: %ld kernels, raising SIG%s\n", kernels, sig_name.c_str());

  struct sigaction current {};
  sigaction(sig, nullptr, &current);
  if (current.sa_handler == SIG_IGN) {
    // Inherited from whoever started us (e.g. a non-interactive shell's `&`).
    std::fprintf(stderr, "signal_self: SIG%s is ignored in this process\n", sig_name.c_str());
  }
  raise(sig);
  // Only reached if something caught the signal and did not end the process.
  std::fprintf(stderr, "signal_self: still alive after SIG%s\n", sig_name.c_str());
  return 99;
}
