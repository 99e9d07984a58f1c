// fork: the parent uses CUDA, then forks a child that never touches CUDA and
// leaves through exit() (so every atexit handler, the tracer's included, runs
// in a process where CUDA was never initialised), then forks a child that
// execs ct_launch_storm (a traced CUDA program of its own), then launches
// more kernels. The parent waits for each child with a deadline, so a child
// that hangs at exit turns into a clear failure instead of a stuck test.
#include <limits.h>
#include <signal.h>
#include <sys/wait.h>

#include <string>
#include <thread>

#include "testapps/common/testapp.h"

__global__ void parent_kernel(int* data, int n) {
  ct::ForElement(n, [=](int i) { data[i] = 2 * i; });
}

namespace {

// Waits up to `seconds` for `pid`; returns its status as a shell would
// (128 + N for signal N), or -1 after killing it when it overran.
int WaitWithDeadline(pid_t pid, int seconds) {
  const int64_t deadline = ct::NowNs() + static_cast<int64_t>(seconds) * 1000000000;
  for (;;) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return -2;
    }
    if (r < 0) return -3;
    if (ct::NowNs() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string SelfDir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) ct::Fail("readlink /proc/self/exe failed");
  buf[n] = '\0';
  std::string path(buf);
  return path.substr(0, path.rfind('/'));
}

}  // namespace

int main(int argc, char** argv) {
  ct::Args args(argc, argv, "fork", "fork without exec, and fork + exec of ct_launch_storm");
  const long before = args.Int("before", 20, "parent kernels before forking");
  const long after = args.Int("after", 20, "parent kernels after the children exit");
  const long child_n = args.Int("child-n", 1000, "kernels the exec'd ct_launch_storm launches");
  const long deadline_s = args.Int("child-deadline-s", 20, "seconds to wait for each child");
  const std::string child_exit =
      args.Str("child-exit", "exit", "how the plain child leaves: exit or _exit");
  const std::string truth_path = args.Finish({"parent_kernel(int*, int)"});
  if (child_exit != "exit" && child_exit != "_exit") ct::Fail("--child-exit is exit or _exit");

  const std::string storm = SelfDir() + "/ct_launch_storm";
  if (access(storm.c_str(), X_OK) != 0) ct::Fail(storm + " not found next to ct_fork");

  constexpr int kN = 1024;
  int* data = nullptr;
  CT_CHECK(cudaMalloc(&data, kN * sizeof(int)));
  for (long i = 0; i < before; ++i) parent_kernel<<<kN / 256, 256>>>(data, kN);
  CT_CHECK_LAUNCH();
  CT_CHECK(cudaDeviceSynchronize());
  ct::Say("fork: parent launched %ld kernels\n", before);

  // Child 1: no exec, no CUDA; some host work, then exit() on purpose.
  std::fflush(nullptr);
  pid_t plain = fork();
  if (plain < 0) ct::Fail("fork failed");
  if (plain == 0) {
    volatile uint64_t x = 0;
    for (uint64_t i = 0; i < 10000000; ++i) x = x + i;
    if (child_exit == "_exit") _exit(0);
    std::exit(0);
  }
  const int plain_status = WaitWithDeadline(plain, static_cast<int>(deadline_s));
  ct::Say("fork: plain child status %d\n", plain_status);

  // Child 2: fork + exec of another testapp; it prints its own line.
  std::fflush(nullptr);
  const std::string n_arg = std::to_string(child_n);
  pid_t execd = fork();
  if (execd < 0) ct::Fail("fork failed");
  if (execd == 0) {
    execl(storm.c_str(), storm.c_str(), "--n", n_arg.c_str(), "--warmup", "0",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  const int exec_status = WaitWithDeadline(execd, static_cast<int>(deadline_s));
  ct::Say("fork: exec'd child status %d\n", exec_status);

  for (long i = 0; i < after; ++i) parent_kernel<<<kN / 256, 256>>>(data, kN);
  CT_CHECK_LAUNCH();
  CT_CHECK(cudaDeviceSynchronize());

  ct::Truth truth("fork");
  truth.Kernels("parent_kernel(int*, int)", before + after);
  truth["children"] = nlohmann::json::array(
      {{{"pid", plain}, {"kind", "fork_no_exec"}, {"exit", child_exit},
        {"status", plain_status},
        {"kernels", nlohmann::json::object()}},
       {{"pid", execd}, {"kind", "exec"}, {"program", "ct_launch_storm"},
        {"status", exec_status}, {"kernels", {{"tiny_kernel(int*, int)", child_n}}}}});
  truth.Write(truth_path);
  CT_CHECK(cudaFree(data));
  if (plain_status != 0 || exec_status != 0) {
    std::fprintf(stderr, "fork: a child failed or hung (plain %d, exec'd %d)\n", plain_status,
                 exec_status);
    return 1;
  }
  ct::Say("fork: parent launched %ld more kernels\n", after);
  return 0;
}
