// die: launches kernels, waits for them, then ends abnormally: SIGKILL on
// itself (no handler of anyone's runs), abort() (SIGABRT) or a store to a
// page mapped without access (SIGSEGV from the kernel). After SIGKILL, and
// after the other two unless the flight recorder is on, its trace has no end
// marker; it must still read back up to its last complete packet, and say
// that it was cut short. With the flight recorder on, cutrace finishes the
// trace at SIGABRT or SIGSEGV and dumps the ring.
#include <signal.h>
#include <sys/mman.h>

#include <thread>

#include "testapps/common/testapp.h"

__global__ void die_kernel(int* data, int n) {
  ct::ForElement(n, [=](int i) { data[i] = i; });
}

int main(int argc, char** argv) {
  ct::Args args(argc, argv, "die", "kernels, then SIGKILL, abort() or SIGSEGV on itself");
  const long kernels = args.Int("kernels", 200000, "kernels before dying");
  const long linger_ms = args.Int("linger-ms", 500, "sleep after the kernels, before dying");
  const std::string how =
      args.Str("how", "kill", "kill (SIGKILL), abort (abort()) or segv (a fault)");
  const std::string truth_path = args.Finish({"die_kernel(int*, int)"});
  if (how != "kill" && how != "abort" && how != "segv") ct::Fail("--how is kill, abort or segv");
  const int sig = how == "kill" ? SIGKILL : how == "abort" ? SIGABRT : SIGSEGV;

  ct::LaunchOverInts(kernels, die_kernel, 32);

  ct::Truth truth("die");
  truth.Kernels("die_kernel(int*, int)", kernels);
  truth.DiesOf(sig);
  truth.Write(truth_path);
  ct::Say("die: %ld kernels, then %s\n", kernels,
          how == "kill" ? "SIGKILL" : how == "abort" ? "abort()" : "SIGSEGV");
  // Give the tracer's threads time to write what CUPTI has delivered.
  std::this_thread::sleep_for(std::chrono::milliseconds(linger_ms));
  if (how == "kill") raise(SIGKILL);
  if (how == "segv") {
    void* page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page != MAP_FAILED) *static_cast<volatile int*>(page) = 1;
  }
  std::abort();
}
